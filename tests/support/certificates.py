"""Certificates for mTLS tests, made with ``cryptography``: a mesh CA, a service certificate it
signs (for 127.0.0.1 and localhost, usable as server and client), and a rogue CA with a
certificate of its own that the mesh must refuse. PEM files in a directory of the test's."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class CertificateFiles:
    """One identity: its certificate, its key, and the CA certificate that signed it."""

    cert_file: Path
    key_file: Path
    ca_file: Path

    def environment(self) -> dict[str, str]:
        """The stack-wide variables that turn mTLS on with this identity."""
        return {
            "LOCUS_TLS_CERT_FILE": str(self.cert_file),
            "LOCUS_TLS_KEY_FILE": str(self.key_file),
            "LOCUS_TLS_CA_FILE": str(self.ca_file),
        }


@dataclass(frozen=True)
class MeshCertificates:
    service: CertificateFiles  # signed by the mesh CA
    rogue: CertificateFiles  # signed by another CA (same names, so only the signer differs)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)


def _write_certificate(certificate: x509.Certificate, path: Path) -> None:
    path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))


def _authority(common_name: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(common_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    return certificate, key


def _leaf(
    common_name: str, authority: x509.Certificate, authority_key: ec.EllipticCurvePrivateKey
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(authority.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .sign(authority_key, hashes.SHA256())
    )
    return certificate, key


def _identity(directory: Path, name: str, authority_name: str) -> CertificateFiles:
    authority, authority_key = _authority(authority_name)
    certificate, key = _leaf(name, authority, authority_key)
    files = CertificateFiles(
        directory / f"{name}.crt", directory / f"{name}.key", directory / f"{name}-ca.crt"
    )
    _write_certificate(certificate, files.cert_file)
    _write_key(key, files.key_file)
    _write_certificate(authority, files.ca_file)
    return files


def make_mesh_certificates(directory: Path) -> MeshCertificates:
    """A fresh mesh CA and service identity, and a rogue one, as PEM files in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    return MeshCertificates(
        service=_identity(directory, "locus-service", "Locus test mesh CA"),
        rogue=_identity(directory, "rogue-service", "Rogue test CA"),
    )
