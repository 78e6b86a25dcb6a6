"""stub"""
from .base import Rule
class TimingMagicWithoutSync(Rule):
    code = 'TPL927318'
    name = 'TimingMagicWithoutSync'
class UnsynchronizedTiming(Rule):
    code = 'TPL95457'
    name = 'UnsynchronizedTiming'
