"""Vendored from GE: ge_ir.proto (its source, commit and licence in its header) and the module protoc generated
from it (how to regenerate it is in that module's header). Not edited by hand."""
