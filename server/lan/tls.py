"""TLS without a certificate authority: ``tulips-server --tls``.

On first run the server makes a self-signed certificate and its key in the
data directory (:data:`CERT_FILE`, :data:`KEY_FILE`; the key readable by its
owner only) and uses them on every later run, so its fingerprint stays the
same and clients that trusted it once (PROTOCOL.md, "Encrypted connections")
keep trusting it. ``--tls-cert FILE --tls-key FILE`` uses a certificate of the
operator's own instead. Either way the server logs the certificate's
fingerprint, for players to compare.

Every file problem — missing, unreadable, not PEM, a key that does not belong
to the certificate — is a :class:`TlsError` whose message names the file and
what is wrong; nothing is overwritten but an incomplete pair this module made.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import logging
import os
import socket
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

from protocol.lan import fingerprint

from ..config import ServerConfig

__all__ = ["CERT_FILE", "KEY_FILE", "TlsError", "TlsSetup", "from_config", "load", "self_signed"]

log = logging.getLogger("server.tls")

#: The self-signed certificate and key ``--tls`` keeps in the data directory.
CERT_FILE = "tls-cert.pem"
KEY_FILE = "tls-key.pem"
#: How long a self-signed certificate is valid: clients pin it, so a long life
#: spares everyone a "certificate changed" warning.
VALID_DAYS = 3650


class TlsError(Exception):
    """A certificate or key that cannot be used; the message says which file and why."""


@dataclass(frozen=True, slots=True)
class TlsSetup:
    """A server's TLS: the context to serve with and what to tell people."""

    context: ssl.SSLContext
    #: ``SHA256:AB:CD:…`` of the certificate the server presents
    fingerprint: str
    cert: Path
    key: Path
    #: whether this run made the certificate (its first run with --tls)
    created: bool = False


def from_config(config: ServerConfig) -> TlsSetup | None:
    """The TLS ``config`` asks for, or None for plain ``ws://``."""
    if config.tls_cert is None or config.tls_key is None:
        return None
    if config.tls_self_signed:
        return self_signed(config.tls_cert, config.tls_key)
    return load(config.tls_cert, config.tls_key)


def self_signed(cert: Path, key: Path, hostname: str | None = None) -> TlsSetup:
    """The self-signed certificate at ``cert`` (key at ``key``), made on first use."""
    created = False
    if not (cert.exists() and key.exists()):
        for leftover in (p for p in (cert, key) if p.exists()):
            log.warning("%s has no partner file; making a new certificate and key", leftover)
        try:
            for folder in {cert.parent, key.parent}:
                folder.mkdir(parents=True, exist_ok=True)
            _write_pair(cert, key, hostname or socket.gethostname())
        except OSError as exc:
            raise TlsError(
                f"cannot make a TLS certificate in {cert.parent}: {exc.strerror or exc}"
            ) from None
        created = True
    setup = load(cert, key)
    return TlsSetup(setup.context, setup.fingerprint, cert, key, created)


def load(cert: Path, key: Path) -> TlsSetup:
    """A certificate (PEM, optionally followed by its chain) and its unencrypted key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    cert_data, key_data = _read(cert, "certificate"), _read(key, "key")
    try:
        leaf = x509.load_pem_x509_certificates(cert_data)[0]
    except ValueError:
        raise TlsError(f"TLS certificate {cert}: not a PEM certificate") from None
    try:
        private = serialization.load_pem_private_key(key_data, password=None)
    except (ValueError, TypeError) as exc:
        why = "it is encrypted" if "encrypted" in str(exc) else "not a PEM private key"
        raise TlsError(f"TLS key {key}: {why} (give an unencrypted PEM key)") from None
    public = serialization.PublicFormat.SubjectPublicKeyInfo
    encoding = serialization.Encoding.DER
    if leaf.public_key().public_bytes(encoding, public) != private.public_key().public_bytes(
        encoding, public
    ):
        raise TlsError(f"TLS key {key} does not belong to the certificate {cert}")
    if key.stat().st_mode & 0o077:
        log.warning("TLS key %s can be read by others: chmod 600 %s", key, key)
    if leaf.not_valid_after_utc < datetime.datetime.now(datetime.UTC):
        log.warning("TLS certificate %s expired on %s", cert, leaf.not_valid_after_utc.date())
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert, key)
    except ssl.SSLError as exc:
        raise TlsError(f"TLS certificate {cert} and key {key}: {exc.reason or exc}") from None
    return TlsSetup(context, fingerprint(leaf.public_bytes(encoding)), cert, key)


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise TlsError(f"TLS {what} {path}: no such file") from None
    except IsADirectoryError:
        raise TlsError(f"TLS {what} {path}: is a directory, not a file") from None
    except OSError as exc:
        raise TlsError(f"TLS {what} {path}: cannot read it: {exc.strerror or exc}") from None


def _write_pair(cert: Path, key: Path, hostname: str) -> None:
    """A new P-256 key and a self-signed certificate for it, each written whole
    (a temporary file renamed into place), the key with mode 0600."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name(
        [x509.NameAttribute(NameOID.COMMON_NAME, f"Gift of Tulips on {hostname}"[:64])]
    )
    now = datetime.datetime.now(datetime.UTC)
    alt_names: list[x509.GeneralName] = [
        x509.DNSName("localhost"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
    ]
    with contextlib.suppress(ValueError, UnicodeError):  # a host name DNS cannot spell
        alt_names.insert(0, x509.DNSName(hostname.encode("idna").decode("ascii")))
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
        .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(private, hashes.SHA256())
    )
    key_pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    _write_atomically(key, key_pem, 0o600)
    _write_atomically(cert, certificate.public_bytes(serialization.Encoding.PEM), 0o644)
    log.info("made a self-signed TLS certificate %s and key %s", cert, key)


def _write_atomically(path: Path, data: bytes, mode: int) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)  # mode 0600
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
