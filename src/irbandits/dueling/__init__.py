"""Online dueling-bandit algorithms; importing this package registers every algorithm."""

from irbandits.dueling.base import (
    AlgorithmSpec,
    DuelingAlgorithm,
    get_algorithm,
    list_algorithms,
    parse_spec,
)
from irbandits.params import Param

# isort: off
# The order of these imports is the order the algorithms register in: the order `irbandits algorithms`
# lists them and `irbandits simulate` runs them by default (the seeds' tables, newest families first).
from irbandits.dueling.dts import DTS, DTSPlus
from irbandits.dueling.mergedts import MergeDTS
from irbandits.dueling.mergerucb import MergeRUCB
from irbandits.dueling.rex3 import REX3
from irbandits.dueling.rucb import RUCB
from irbandits.dueling.rcs import RCS
from irbandits.dueling.rmed import RMED1
from irbandits.dueling.rmed import RMED2, RMED2FH
from irbandits.dueling.selfsparring import SelfSparring
from irbandits.dueling.ccb import CCB
from irbandits.dueling.scb import SCB
from irbandits.dueling.pbr import PBR
from irbandits.dueling.rankel import RankEl
from irbandits.dueling.interleaved_filter import IF
from irbandits.dueling.btm import BTM
from irbandits.dueling.savage import CondorcetSAVAGE, CopelandSAVAGE
from irbandits.dueling.sparring import SparringEXP3, SparringTS, SparringUCB
from irbandits.dueling.doubler import Doubler
from irbandits.dueling.ucb_multileave import UCBMultileave
from irbandits.dueling.multisbm import MultiSBM
from irbandits.dueling.winner_stays import WSS, WSW
from irbandits.dueling.mdb import MDB
# isort: on

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
    "PBR",
    "RankEl",
    "IF",
    "BTM",
    "CondorcetSAVAGE",
    "CopelandSAVAGE",
    "Doubler",
    "SparringUCB",
    "SparringEXP3",
    "SparringTS",
    "UCBMultileave",
    "MultiSBM",
    "WSW",
    "WSS",
    "MDB",
]
