"""[DEFAULT] options shared by every elastman process."""
import socket

from oslo_config import cfg

service_opts = [
    cfg.StrOpt('host', default=socket.gethostname(),
               sample_default='<hostname>',
               help='Name of this host. Used as the RPC server name and as '
                    'the holder name in store leases.'),
    cfg.StrOpt('state_path', default='/var/lib/elastman',
               help='Directory where elastman keeps local state (pid files, '
                    'local cloud nodes, sockets).'),
    cfg.IntOpt('graceful_shutdown_timeout', default=30, min=0,
               help='Seconds a process waits for its workers to finish after '
                    'SIGTERM before exiting anyway.'),
]


def register_opts(conf):
    conf.register_opts(service_opts)


def list_opts():
    return [('DEFAULT', service_opts)]
