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
"""Plug-ins from stevedore namespaces, with one rule for failures.

Whatever is asked for must load: a name that no entry point of the
namespace has, or whose module fails to import, is a
:class:`~elastman.common.exception.ConfigurationError` naming the option
that asked for it, the namespace and the cause. Nothing is skipped with a
warning, so a typo in a configuration file stops the process at start
rather than running with less than was configured.

Namespaces (``setup.cfg``): ``elastman.compute_drivers``,
``elastman.monitor.sources``, ``elastman.features``,
``elastman.forecasters``.
"""
from __future__ import annotations

from typing import Any, Sequence

from stevedore import driver as sd_driver
from stevedore import extension as sd_extension

from elastman.common import exception


def _fail(option: str, namespace: str, name: str, cause: Any) -> exception.ConfigurationError:
    return exception.ConfigurationError(
        reason='%s: %r cannot be loaded from the %s namespace: %s'
               % (option, name, namespace, cause))


def driver(namespace: str, name: str, option: str,
           invoke_args: Sequence[Any] = (), invoke: bool = True) -> Any:
    """The plug-in ``name``: an instance made with ``invoke_args``, or (with
    ``invoke=False``) the class.
    """
    try:
        manager = sd_driver.DriverManager(namespace, name, invoke_on_load=invoke,
                                          invoke_args=tuple(invoke_args))
    except Exception as exc:  # NoMatches, or an import error of the plug-in
        raise _fail(option, namespace, name, exc)
    return manager.driver


def classes(namespace: str, option: str,
            names: Sequence[str] | None = None) -> dict[str, type]:
    """The plug-in classes of ``names`` in that order, or, with no names,
    every plug-in of the namespace (by name).
    """
    if names:
        return {name: driver(namespace, name, option, invoke=False) for name in names}
    failed: list[tuple[str, Exception]] = []
    manager = sd_extension.ExtensionManager(
        namespace, invoke_on_load=False,
        on_load_failure_callback=lambda _m, ep, exc: failed.append((ep.name, exc)))
    if failed:
        name, exc = failed[0]
        raise _fail(option, namespace, name, exc)
    found = {ext.name: ext.plugin for ext in sorted(manager, key=lambda e: e.name)}
    if not found:
        raise exception.ConfigurationError(
            reason='%s: the %s namespace has no plug-in; is elastman installed '
                   'in this Python?' % (option, namespace))
    return found
