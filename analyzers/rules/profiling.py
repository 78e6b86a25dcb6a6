"""stub"""
from .base import Rule
class CudnnBenchmarkUnderProfiler(Rule):
    code = 'TPL91275'
    name = 'CudnnBenchmarkUnderProfiler'
