"""The JVM side of running Cassandra 5.0 from its Maven jars under JDK 17+."""
from __future__ import annotations

import glob
import os
import shutil

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


def classpath(conf) -> str:
    return os.path.join(lib_dir(conf), '*')


def nodetool_command(conf, jmx_host: str, jmx_port: int,
                     log_dir: str) -> list[str]:
    """The argv prefix of nodetool against one node's JMX port."""
    return [java(conf), '-Xmx128m', '-XX:+UseSerialGC',
            '-Dcassandra.logdir=%s' % log_dir,
            '-Dlogback.configurationFile=logback-tools.xml',
            *jdk17_flags(), '-cp', classpath(conf),
            'org.apache.cassandra.tools.NodeTool',
            '-h', jmx_host, '-p', str(jmx_port)]
