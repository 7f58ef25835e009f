"""Workload forecasters, loaded as plug-ins from the ``elastman.forecasters`` namespace."""
from elastman.predictor.forecasters.base import ForecastError
from elastman.predictor.forecasters.base import Forecaster
from elastman.predictor.forecasters.base import NotEnoughHistory

NAMESPACE = 'elastman.forecasters'

__all__ = ['NAMESPACE', 'Forecaster', 'ForecastError', 'NotEnoughHistory']
