"""TLS: certificates are verified by default; `caBundle` trusts a private CA; `insecureTrustAllCertificates` turns
verification off for emulators. Runs against an emulator serving HTTPS with a certificate made by the test."""

from __future__ import annotations

import datetime
import ipaddress
import json

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from harness.emulator import ACCESS_KEY, SECRET_KEY, KinesisEmulator
from harness.kinesis import Kinesis
from harness.spark import kinesis_source
from test_polling_source import LOAD_ERRORS, assert_delivered_exactly, numbered


def self_signed_for_loopback() -> tuple[str, str]:
    """A key and a certificate for 127.0.0.1 (as its own CA), both PEM."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kinesis-spark test CA")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return key_pem, cert.public_bytes(serialization.Encoding.PEM).decode()


@pytest.fixture(scope="module")
def tls_emulator(tmp_path_factory):
    """An emulator whose HTTPS port presents a certificate for 127.0.0.1; yields it with the CA's PEM path."""
    root = tmp_path_factory.mktemp("tls")
    key_pem, cert_pem = self_signed_for_loopback()
    (root / "server.json").write_text(json.dumps({"server": {"key": key_pem, "cert": cert_pem}}))
    (root / "ca.pem").write_text(cert_pem)
    with KinesisEmulator(log_path=root / "emulator.log", settings={"KINESIS_MOCK_CERT_PATH": str(root / "server.json")}) as running:
        yield running, root / "ca.pem"


@pytest.fixture(scope="module")
def filled_stream(tls_emulator):
    emulator, _ = tls_emulator
    kinesis = Kinesis(emulator.endpoint)
    kinesis.create_stream("tls-stream", 1)
    puts = kinesis.put_records("tls-stream", numbered(100))
    kinesis.close()
    return puts


def https_reader(spark, emulator, **options):
    return kinesis_source(spark, "tls-stream", emulator.tls_endpoint, awsAccessKey=ACCESS_KEY, awsSecretKey=SECRET_KEY,
                          **options)


def test_an_untrusted_certificate_is_refused_with_what_to_do(spark, tls_emulator, filled_stream):
    emulator, _ = tls_emulator
    with pytest.raises(LOAD_ERRORS) as failure:
        https_reader(spark, emulator)
    message = str(failure.value)
    assert "TLS" in message and "'caBundle'" in message and emulator.tls_endpoint in message, message[:2000]


def test_a_ca_bundle_is_trusted(spark, tls_emulator, filled_stream, sink):
    emulator, ca = tls_emulator
    records = sink.wait_for_rows(sink.start(https_reader(spark, emulator, caBundle=str(ca))), 100)
    assert_delivered_exactly(records, filled_stream, "tls-stream")


def test_verification_can_be_turned_off_explicitly(spark, tls_emulator, filled_stream, sink):
    emulator, _ = tls_emulator
    records = sink.wait_for_rows(
        sink.start(https_reader(spark, emulator, insecureTrustAllCertificates="true")), 100
    )
    assert_delivered_exactly(records, filled_stream, "tls-stream")


@pytest.mark.parametrize("trust", ["caBundle", "insecureTrustAllCertificates"])
def test_enhanced_fan_out_over_tls_http2_trusts_the_same_way(spark, tls_emulator, filled_stream, sink, trust):
    """SubscribeToShard runs on another HTTP client (Netty, HTTP/2 agreed by ALPN) than the other calls: it must
    trust exactly what they trust."""
    emulator, ca = tls_emulator
    value = str(ca) if trust == "caBundle" else "true"
    source = https_reader(spark, emulator, consumerMode="efo", consumerName=f"tls-{trust}", **{trust: value})
    query = sink.start(source)
    assert_delivered_exactly(sink.wait_for_rows(query, 100), filled_stream, "tls-stream")
    assert int(query.lastProgress["sources"][0]["metrics"]["efoSubscriptions"]) >= 1
