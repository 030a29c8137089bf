-- One database per service that keeps metadata (run once, when the data directory is created).
CREATE DATABASE "locus_gateway" OWNER "locus";
CREATE DATABASE "locus_ingestion" OWNER "locus";
CREATE DATABASE "locus_ast" OWNER "locus";
CREATE DATABASE "locus_impact" OWNER "locus";
