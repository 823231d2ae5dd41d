"""Online dueling-bandit algorithms; importing this package registers every algorithm."""

from irbandits.dueling.base import (
    AlgorithmSpec,
    DuelingAlgorithm,
    get_algorithm,
    list_algorithms,
    parse_spec,
)
from irbandits.dueling.btm import BTM
from irbandits.dueling.ccb import CCB
from irbandits.dueling.doubler import Doubler
from irbandits.dueling.dts import DTS, DTSPlus
from irbandits.dueling.interleaved_filter import IF
from irbandits.dueling.mergedts import MergeDTS
from irbandits.dueling.mergerucb import MergeRUCB
from irbandits.dueling.rcs import RCS
from irbandits.dueling.rex3 import REX3
from irbandits.dueling.rmed import RMED1, RMED2, RMED2FH
from irbandits.dueling.rucb import RUCB
from irbandits.dueling.savage import CondorcetSAVAGE, CopelandSAVAGE
from irbandits.dueling.scb import SCB
from irbandits.dueling.selfsparring import SelfSparring
from irbandits.dueling.sparring import SparringEXP3, SparringTS, SparringUCB
from irbandits.dueling.ucb_multileave import UCBMultileave
from irbandits.params import Param

__all__ = [
    "AlgorithmSpec",
    "DTS",
    "DTSPlus",
    "DuelingAlgorithm",
    "MergeDTS",
    "MergeRUCB",
    "Param",
    "REX3",
    "RMED1",
    "RCS",
    "RUCB",
    "SelfSparring",
    "get_algorithm",
    "list_algorithms",
    "parse_spec",
    "CCB",
    "RMED2",
    "RMED2FH",
    "SCB",
    "IF",
    "BTM",
    "CondorcetSAVAGE",
    "CopelandSAVAGE",
    "Doubler",
    "SparringUCB",
    "SparringEXP3",
    "SparringTS",
    "UCBMultileave",
]
