"""What a file path says about its file: its role (source, tests, docs, vendored, ...)."""

from locus.codepaths.path_roles import VALUE_CLASSES, PathRole, classify_path, value_class

__all__ = ["VALUE_CLASSES", "PathRole", "classify_path", "value_class"]
