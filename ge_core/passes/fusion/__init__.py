"""Operator fusion: graph fusion (pattern rewrites, fusion/graph) and UB fusion (chains kept in the Unified
Buffer, fusion/ub), every candidate's decision logged."""
