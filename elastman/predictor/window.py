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
"""One cluster's workload rows over the history window, kept between rounds.

The predictor's history window is long (``history_window`` periods: about
67 hours at the defaults). Read whole from the store each round, it would
cost every cluster thousands of rows a round where a few are new. A
:class:`WorkloadWindow` keeps the rows it has read; the next round reads
only those from its newest row less an overlap (rows that the monitor
wrote late), and the rows read replace the ones kept from that instant on.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np


class WorkloadWindow:
    """The rows (epoch s and one value per field) of one cluster's workload
    inside the history window, oldest first.
    """

    def __init__(self, fields: Sequence[str]) -> None:
        self.fields = tuple(fields)
        self.ts = np.empty(0)
        self.values = {f: np.empty(0) for f in self.fields}

    def __len__(self) -> int:
        return int(self.ts.size)

    def read_from(self, start: float, overlap: float) -> float:
        """Where the next read starts: the window's start, or the newest
        row kept less ``overlap`` s, whichever is later.
        """
        if not self.ts.size:
            return start
        return max(start, float(self.ts[-1]) - overlap)

    def merge(self, since: float, stamps: Sequence[float],
              rows: Sequence[Mapping[str, float | None]],
              start: float) -> None:
        """Take ``rows`` (every row from ``since`` on, oldest first, at
        ``stamps``) in place of the rows kept from ``since`` on, and drop
        those before ``start``.
        """
        keep = (self.ts < since) & (self.ts >= start)
        new_ts = np.asarray(stamps, dtype=float)
        fresh = new_ts >= start
        self.ts = np.concatenate([self.ts[keep], new_ts[fresh]])
        for f in self.fields:
            new = np.array([np.nan if r.get(f) is None else r[f]
                            for r in rows], dtype=float)
            self.values[f] = np.concatenate([self.values[f][keep],
                                             new[fresh]])
