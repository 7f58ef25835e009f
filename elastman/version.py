"""Package version, as pbr computes it."""
import pbr.version

version_info = pbr.version.VersionInfo('elastman')
