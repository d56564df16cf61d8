# libsc's ABI against the committed baseline (issue 23), with abidiff from
# Debian's abigail-tools.  Included by the Makefile, whose variables it
# reads (LIBSC_SO, OUT).
#
#   make abi-check     compare the built libsc.so.0 with lib/api/libsc.abi:
#                      a removed or changed function or type fails, added
#                      functions pass (mk/abi-check.sh); a new SONAME passes
#                      too, saying the baseline is to be made again
#   make abi-baseline  write lib/api/libsc.abi from the built library: on
#                      purpose only, with a SONAME bump or a new function
#
# The baseline holds what sc.h declares (--headers-dir include), not the
# library's private types, so that a change inside lib/ is no ABI change.

ABI_BASELINE = lib/api/libsc.abi
ABI_TOOLS    = abigail-tools

.PHONY: abi-check abi-baseline abi-deps

abi-deps:
	@sh test/deps.sh $(ABI_TOOLS)

abi-check: abi-deps $(LIBSC_SO)
	@sh mk/abi-check.sh $(ABI_BASELINE) $(LIBSC_SO)

abi-baseline: abi-deps $(LIBSC_SO)
	abidw --headers-dir include --drop-private-types --drop-undefined-syms \
	    --no-show-locs --no-corpus-path --out-file $(ABI_BASELINE) $(LIBSC_SO)
