"""stub"""
from .base import Rule
class CompileBeforeDDP(Rule):
    code = 'TPL912937'
    name = 'CompileBeforeDDP'
