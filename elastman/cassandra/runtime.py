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
"""The JVM side of running Cassandra 5.0 from its Maven jars under JDK 17+."""
from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading

from elastman.common import exception

# The module exports and opens Cassandra's own conf/jvm17-server.options asks
# for; without them JDK 17 refuses the reflective access Cassandra relies on.
JDK17_EXPORTS = (
    'java.base/jdk.internal.misc',
    'java.base/jdk.internal.ref',
    'java.base/sun.nio.ch',
    'java.management.rmi/com.sun.jmx.remote.internal.rmi',
    'java.rmi/sun.rmi.registry',
    'java.rmi/sun.rmi.server',
    'java.sql/java.sql',
)
JDK17_OPENS = (
    'java.base/java.lang.module',
    'java.base/jdk.internal.loader',
    'java.base/jdk.internal.ref',
    'java.base/jdk.internal.reflect',
    'java.base/jdk.internal.math',
    'java.base/jdk.internal.module',
    'java.base/jdk.internal.util.jar',
    'jdk.management/com.sun.management.internal',
    'java.base/sun.nio.ch',
    'java.base/java.io',
    'java.base/java.nio',
    'java.base/java.util.concurrent',
    'java.base/java.util',
    'java.base/java.util.concurrent.atomic',
    'java.base/java.lang',
    'java.base/java.math',
    'java.base/java.lang.reflect',
    'java.base/java.net',
    'java.base/sun.nio.fs',
)


def jdk17_flags() -> list[str]:
    flags = []
    for module in JDK17_EXPORTS:
        flags.append('--add-exports=%s=ALL-UNNAMED' % module)
    for module in JDK17_OPENS:
        flags.append('--add-opens=%s=ALL-UNNAMED' % module)
    return flags


def lib_dir(conf) -> str:
    """The jar directory, checked: a clear error if install.sh did not run."""
    path = os.path.expanduser(conf.cassandra.lib_dir)
    if not glob.glob(os.path.join(path, 'cassandra-all-*.jar')):
        raise exception.ConfigurationError(
            reason='[cassandra] lib_dir %s holds no cassandra-all jar; run '
                   'tools/install.sh' % path)
    return path


def java(conf) -> str:
    exe = shutil.which(conf.cassandra.java) or conf.cassandra.java
    if not os.path.isfile(exe):
        raise exception.ConfigurationError(
            reason='[cassandra] java %r is not an executable'
                   % conf.cassandra.java)
    return exe


#: The JVM program for JMX on Cassandra nodes, run in source-file mode (no
#: build step): ``bridge``, the monitor's JMX client (elastman.monitor.jmx);
#: ``poll``, the host agent's latency poller (elastman.hostagent.jmxlatency).
JMX_PROGRAM = os.path.join(os.path.dirname(__file__), 'java',
                           'CassandraJmx.java')


def jmx_program(java_exe: str, mode: str, jvm_options: list[str]
                ) -> list[str]:
    """The command line of :data:`JMX_PROGRAM` in ``mode``."""
    return [java_exe, *jvm_options, JMX_PROGRAM, mode]


def classpath(conf) -> str:
    return os.path.join(lib_dir(conf), '*')


def nodetool_command(conf, jmx_host: str, jmx_port: int, log_dir: str,
                     jvm_flags: list[str] | tuple[str, ...] = ()
                     ) -> list[str]:
    """The argv prefix of nodetool against one node's JMX port."""
    return [java(conf), '-Xmx128m', '-XX:+UseSerialGC',
            '-Dcassandra.logdir=%s' % log_dir,
            '-Dlogback.configurationFile=logback-tools.xml',
            *jdk17_flags(), *jvm_flags, '-cp', classpath(conf),
            'org.apache.cassandra.tools.NodeTool',
            '-h', jmx_host, '-p', str(jmx_port)]


# The password of the trust stores below: they hold public CA certificates
# only, and Java needs some password to open a PKCS12 file.
TRUSTSTORE_PASSWORD = 'elastman-ca'
_PEM_CERT = re.compile(r'-----BEGIN CERTIFICATE-----[^-]+'
                       r'-----END CERTIFICATE-----')
_truststore_lock = threading.Lock()


def truststore(conf, ca_pem: str) -> tuple[str, str]:
    """A PKCS12 trust store holding the certificates of ``ca_pem``, for a
    JVM's ``javax.net.ssl.trustStore``; (path, password). Made once per CA
    with the JDK's keytool, in a directory only this user can read.
    """
    certs = _PEM_CERT.findall(ca_pem)
    if not certs:
        raise exception.ConfigurationError(
            reason='the CA certificate holds no PEM "BEGIN CERTIFICATE" '
                   'block')
    digest = hashlib.sha256('\n'.join(certs).encode()).hexdigest()[:20]
    directory = os.path.join(tempfile.gettempdir(),
                             'elastman-truststores-%d' % os.getuid())
    path = os.path.join(directory, digest + '.p12')
    with _truststore_lock:
        if os.path.exists(path):
            return path, TRUSTSTORE_PASSWORD
        os.makedirs(directory, mode=0o700, exist_ok=True)
        keytool = os.path.join(os.path.dirname(os.path.realpath(java(conf))),
                               'keytool')
        partial = path + '.%d.tmp' % os.getpid()
        with tempfile.TemporaryDirectory(dir=directory) as work:
            for index, cert in enumerate(certs):
                pem = os.path.join(work, 'ca%d.pem' % index)
                with open(pem, 'w') as f:
                    f.write(cert + '\n')
                proc = subprocess.run(
                    [keytool, '-importcert', '-noprompt', '-alias',
                     'ca%d' % index, '-file', pem, '-keystore', partial,
                     '-storetype', 'PKCS12', '-storepass',
                     TRUSTSTORE_PASSWORD], capture_output=True, text=True,
                    timeout=60, stdin=subprocess.DEVNULL)
                if proc.returncode != 0:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(partial)
                    raise exception.ConfigurationError(
                        reason='keytool cannot import the CA certificate: %s'
                               % (proc.stdout + proc.stderr).strip()[:300])
        os.replace(partial, path)
    return path, TRUSTSTORE_PASSWORD
