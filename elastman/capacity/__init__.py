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
"""The online capacity model of elastman.

A VM's workload is a point in a feature space (read rate, write rate, average
request size, ...). Samples land in sparse grid cells; each cell keeps the last
``n`` values of the SLO metric and is labelled SLO-met or violated. An SVM fitted
on the labelled cells separates the two regions, and the capacity of a VM for a
workload point ``w`` is where the ray from the origin through ``w`` crosses that
boundary.

Modules: :mod:`.features` (plug-ins), :mod:`.params`, :mod:`.grid`,
:mod:`.model` (fitting and the portable fitted model), :mod:`.capacity` (the
ray search), :mod:`.validation` and :mod:`.serialization`.
"""
