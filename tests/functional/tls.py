#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.
"""A throwaway CA and a node certificate for the TLS tests.

The node certificate names every address of a loopback network, so that
host-name verification passes for whichever address a local server gets.
"""
from __future__ import annotations

import dataclasses
import datetime
import ipaddress
import os

from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography import x509
from cryptography.x509.oid import NameOID


@dataclasses.dataclass
class Material:
    ca_pem: str                  # what a client trusts
    keystore: str                # PKCS12 file: the nodes' key and chain
    keystore_password: str


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def make(directory: str, network: str, password: str = 'node-keystore',
         ca_name: str = 'elastman test CA') -> Material:
    """Write ``node.p12`` into ``directory``; return it with the CA's PEM."""
    now = datetime.datetime.now(datetime.timezone.utc)
    valid = dict(not_valid_before=now - datetime.timedelta(hours=1),
                 not_valid_after=now + datetime.timedelta(days=2))
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder(**valid)
          .subject_name(_name(ca_name)).issuer_name(_name(ca_name))
          .public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number())
          .add_extension(x509.BasicConstraints(ca=True, path_length=0),
                         critical=True)
          .add_extension(x509.KeyUsage(
              digital_signature=True, key_cert_sign=True, crl_sign=True,
              content_commitment=False, key_encipherment=False,
              data_encipherment=False, key_agreement=False,
              encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    addresses = [x509.IPAddress(ipaddress.ip_address('127.0.0.1'))] + [
        x509.IPAddress(host) for host in ipaddress.ip_network(network).hosts()]
    cert = (x509.CertificateBuilder(**valid)
            .subject_name(_name('cassandra node')).issuer_name(ca.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .add_extension(x509.SubjectAlternativeName(addresses),
                           critical=False)
            .add_extension(x509.ExtendedKeyUsage(
                [x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, 'node.p12')
    with open(path, 'wb') as f:
        f.write(pkcs12.serialize_key_and_certificates(
            b'node', key, cert, [ca],
            serialization.BestAvailableEncryption(password.encode())))
    return Material(ca.public_bytes(serialization.Encoding.PEM).decode(),
                    path, password)
