"""Workload forecasters: plug-ins of the ``elastman.forecasters`` namespace."""

from elastman.predictor.forecasters.base import Forecaster
from elastman.predictor.forecasters.base import ForecastError
from elastman.predictor.forecasters.base import NotEnoughHistory

NAMESPACE = 'elastman.forecasters'

__all__ = ['NAMESPACE', 'Forecaster', 'ForecastError', 'NotEnoughHistory']
