# cudaenv: build, install, test, bench.
#   make                      build build/bin/cudaenv (+ build/libexec/cudaenv/cudaenv-full)
#   make check                all tests that need no GPU (what CI runs)
#   make check-asan           the same under -fsanitize=address,undefined
#   make check-tsan           the install's threads under -fsanitize=thread (downloads, unpackers,
#                             decode slots, xz workers): their unit tests and component-install scenarios
#   make bench                benchmarks, ratios against the alternatives
#   make demo                 install -> use -> verify offline against a generated local mirror
#   make mutate               break one check at a time: a sample of generated mutants within a budget
#                             (make mutate-hand: the hand-written tests/mutants/*.mut; mutate-full: all)
#   make install PREFIX=/usr/local DESTDIR=
#   make uninstall PREFIX=/usr/local DESTDIR=   (the same variables as install)
#   make dist [SIGN_KEY=key.pem] [RELEASE_BASE=URL]   dist/: the release tarball, .deb and wheel for
#                             x86_64 and aarch64, install.sh, SHA256SUMS(.sig), built in Debian 11
#                             roots (aarch64 through qemu-user-static; tools/dist.sh, DIST_ARCHS)
#   make distcheck            make dist, lintian, then the release in bare Debian 11/13 roots and an
#                             arm64 Debian 11 root (tests/dist/check.sh)
#
# Two binaries from one source tree: `cudaenv` is the light one on the hot
# path (env/use/cd hook/current) and links only libc (libcjson is dlopened on first
# JSON use: src/cli/cjson_lazy.c; libcrypto when the resolution index hashes a
# changed manifest: src/cli/crypto_lazy.c); commands
# that need the network or archives (install, URL manifests) re-exec
# `libexec/cudaenv/cudaenv-full`, which also links libcurl, libarchive and
# libcrypto.  Loading those costs ~20 ms per exec (PERFORMANCE.md).

PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR   = $(PREFIX)/bin
LIBEXECDIR = $(PREFIX)/libexec/cudaenv
DATADIR  = $(PREFIX)/share/cudaenv
MANDIR   = $(PREFIX)/share/man
BUILD   ?= build
# the same tree by one name: an absolute BUILD inside the checkout is made
# relative, or the dependency files (-MMD) name targets that a later relative
# run never matches, and a changed header rebuilds nothing
override BUILD := $(patsubst $(CURDIR)/%,%,$(BUILD))
PKG_CONFIG ?= pkg-config
VERSION  = 0.1.0

HEAVY_PKGS = libcurl libarchive libcrypto liblzma
LIGHT_PKGS = libcjson

# make check / make demo install what they lack first (tools/setup.sh --deps
# waits for a held apt lock): demo and the build what tools/deps.txt names,
# check (and the other test targets) tools/deps-test.txt too (--test); a plain
# make only says what to run.
SETUP_TEST := $(if $(filter check check-asan bench mutate mutate-hand mutate-full check-tsan,$(MAKECMDGOALS)),--test)
ifneq ($(filter check check-asan demo bench mutate mutate-hand mutate-full check-tsan,$(MAKECMDGOALS)),)
ifneq ($(shell tools/setup.sh --check $(SETUP_TEST) >/dev/null 2>&1 && echo ok),ok)
$(info tools/setup.sh --deps $(SETUP_TEST): installing the missing packages of tools/deps.txt$(if $(SETUP_TEST), and tools/deps-test.txt) first)
SETUP_RC := $(shell tools/setup.sh --deps $(SETUP_TEST) >&2; echo $$?)
ifneq ($(SETUP_RC),0)
$(error tools/setup.sh --deps $(SETUP_TEST) failed (exit $(SETUP_RC)): see above)
endif
endif
endif

# Without the -dev packages, say what to do once instead of a page of
# pkg-config errors (targets that compile nothing are let through).
ifeq ($(filter clean uninstall manifest,$(MAKECMDGOALS)),)
ifneq ($(shell $(PKG_CONFIG) --exists $(LIGHT_PKGS) $(HEAVY_PKGS) 2>/dev/null && echo ok),ok)
$(error build dependencies missing: $(PKG_CONFIG) cannot find all of $(LIGHT_PKGS) $(HEAVY_PKGS). Run tools/setup.sh (Debian/Ubuntu: installs tools/deps.txt with apt, then builds))
endif
endif

WERROR  ?= 1
CC      ?= cc
CFLAGS  ?= -O2 -g
override CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wno-missing-field-initializers \
           -iquote src -DCE_VERSION='"$(VERSION)"' -DCE_DATADIR='"$(DATADIR)"' \
           $(shell $(PKG_CONFIG) --cflags $(LIGHT_PKGS) $(HEAVY_PKGS))
ifeq ($(WERROR),1)
override CFLAGS += -Werror
endif
# XZ=liblzma: a comparison build whose unpackers decode every .xz on liblzma's
# threaded decoder instead of ours (bench/linerate.sh's install-liblzma rows)
ifeq ($(XZ),liblzma)
override CFLAGS += -DCE_XZ_LIBLZMA_MT
endif
# the light binary dlopens libcjson on first use (src/cli/cjson_lazy.c): env/use/the
# hook never load it
LIGHT_LIBS = -ldl -lpthread   # both in libc since glibc 2.34; separate on the release floor (2.31)
FULL_LIBS  = $(shell $(PKG_CONFIG) --libs $(LIGHT_PKGS) $(HEAVY_PKGS)) -ldl -lpthread

# Layers (tools/incgraph.py checks that includes only point down this list):
#   core (vocabulary) <- fetch, machine, manifest <- store, selftest <- archive, system
#   <- doctor, install <- mirror, oci <- cli
# HEAVY_DIRS (src/fetch: downloads, http, digests; src/archive: extraction, the
# entry policy, xz; src/install: the plan and its pipeline; src/mirror; src/oci:
# toolchains as OCI images) are exactly what links libcurl / libarchive /
# libcrypto / liblzma: they and the commands that drive them live only in the
# full binary.
HEAVY_DIRS = install fetch archive mirror oci
HEAVY_SRC = $(wildcard $(HEAVY_DIRS:%=src/%/*.c)) src/cli/mirror_oci.c src/cli/interrupt.c
# Compiled twice: X-full.o with CE_FULL for the full binary, X-light.o without
# for the light one (src/cli/cli.h: FULL_ONLY): main.c, the commands that
# drive HEAVY_DIRS, whose light objects hold only their table entries (name,
# summary, --help text), so help never re-execs the full binary, and verify,
# whose --deep alone needs the full binary (its sha256 of every file).
FULL_CMDS = install mirror push pull self update
TWICE_SRC = src/cli/main.c src/cli/cmd_verify.c $(FULL_CMDS:%=src/cli/cmd_%.c)
CORE_SRC  = $(wildcard src/core/*.c src/machine/*.c src/manifest/*.c src/store/*.c src/doctor/*.c src/system/*.c $(HEAVY_DIRS:%=src/%/*.c) src/selftest/*.c)
CLI_SRC   = $(filter-out $(TWICE_SRC) src/cli/cjson_lazy.c src/cli/crypto_lazy.c,$(wildcard src/cli/*.c))
LIGHT_SRC = $(filter-out $(HEAVY_SRC),$(CORE_SRC) $(CLI_SRC))
FULL_SRC  = $(CORE_SRC) $(CLI_SRC)

# The objects on the switching path (env, use, current: the cd hook's calls)
# are linked first, so the code and constants one exec runs share pages, and
# ctx.o's statics and main's context start .bss on the page the loader
# writes anyway: fewer page faults per start (issue 13; PERFORMANCE.md).
SWITCH_OBJ = $(patsubst %,$(BUILD)/obj/src/%.o,core/ctx cli/main-light cli/args cli/cmd_env cli/cmd_use \
             cli/cmd_current store/activate store/env store/store store/storeindex manifest/index manifest/index_key store/userstate core/trust core/priv \
             core/dirscan manifest/resolve core/version core/path core/file core/status core/error)
LIGHT_OBJ = $(SWITCH_OBJ) $(filter-out $(SWITCH_OBJ),$(LIGHT_SRC:%.c=$(BUILD)/obj/%.o) $(TWICE_SRC:%.c=$(BUILD)/obj/%-light.o) \
             $(BUILD)/obj/src/cli/cjson_lazy.o $(BUILD)/obj/src/cli/crypto_lazy.o)
FULL_OBJ  = $(FULL_SRC:%.c=$(BUILD)/obj/%.o) $(TWICE_SRC:%.c=$(BUILD)/obj/%-full.o)
LIB_OBJ   = $(filter-out $(BUILD)/obj/src/cli/%,$(CORE_SRC:%.c=$(BUILD)/obj/%.o))

UNIT_SRC  = $(wildcard tests/unit/test_*.c)
UNIT_BIN  = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

BIN  = $(BUILD)/bin/cudaenv
FULL = $(BUILD)/libexec/cudaenv/cudaenv-full

all: $(BIN) $(FULL) $(BUILD)/share/cudaenv/manifests $(BUILD)/share/cudaenv/redist $(BUILD)/share/cudaenv/keys

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# libcjson by the path pkg-config knows (no ld.so.cache lookup; the soname
# is the fallback when it moved)
$(BUILD)/obj/src/cli/cjson_lazy.o: override CFLAGS += -DCE_CJSON_LIBDIR='"$(shell $(PKG_CONFIG) --variable=libdir libcjson)"'
# libcrypto likewise (crypto_lazy.c: the index's sha256 of a changed manifest)
$(BUILD)/obj/src/cli/crypto_lazy.o: override CFLAGS += -DCE_CRYPTO_LIBDIR='"$(shell $(PKG_CONFIG) --variable=libdir libcrypto)"'

$(BUILD)/obj/src/cli/%-light.o: src/cli/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/src/cli/%-full.o: src/cli/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DCE_FULL -MMD -MP -c $< -o $@

# framework.c embeds framework.py with .incbin (path from the top of the tree)
$(BUILD)/obj/src/selftest/framework.o: src/selftest/framework.py

$(BIN): $(LIGHT_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(LIGHT_OBJ) $(LIGHT_LIBS)

$(FULL): $(FULL_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(FULL_OBJ) $(FULL_LIBS)

# The binaries find the manifest at <bindir>/../share/cudaenv/manifests.
$(BUILD)/share/cudaenv/manifests:
	@mkdir -p $(BUILD)/share/cudaenv
	ln -sfn $(CURDIR)/share/manifests $@

# The project's keys for signed remote manifests (install/manifest_sig.h).
$(BUILD)/share/cudaenv/keys:
	@mkdir -p $(BUILD)/share/cudaenv
	ln -sfn $(CURDIR)/share/keys $@

# NVIDIA's redistrib JSONs the manifest pins, shipped so that info and
# install need no network for them (components.c checks their sha256).
$(BUILD)/share/cudaenv/redist:
	@mkdir -p $(BUILD)/share/cudaenv
	ln -sfn $(CURDIR)/data/redist/cuda $@

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJ) $(BUILD)/obj/tests/doubles/seams.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(filter %.o,$^) $(FULL_LIBS) -lcmocka

# the command-line parser, from the front end (src/cli/args.c)
$(BUILD)/tests/test_args: $(BUILD)/obj/src/cli/args.o

# The fault points' test double (src/core/fault.h, tests/doubles/seams.c):
# linked into the unit tests, preloaded by the scenario tests.  Built without
# the sanitizers, as the other LD_PRELOAD doubles are.
SEAMS = $(BUILD)/doubles/seams.so
$(SEAMS): tests/doubles/seams.c
	@mkdir -p $(dir $@)
	cc -O2 -g -Wall -shared -fPIC -o $@ $< -ldl

units: $(UNIT_BIN) $(SEAMS)

check: all units
	BUILD=$(BUILD) tests/run.sh

check-asan:
	$(MAKE) BUILD=build-asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" check

# The install's concurrency under ThreadSanitizer, in build-tsan: the download
# threads, the unpacker threads, the decode slots, the download's bell, the
# xz decoder's workers, the ring (core/ring.h) under the .zst/.gz decoding thread (ahead.h) and the hashing
# thread (hashq.h), through the unit tests of fetch, unpack, xz, ring, ahead, hashq
# and the slots and the scenarios that install components (docs/TESTING.md).  The
# first report ends the process (exit 66), so the test that ran it fails.
TSAN_UNITS ?= test_slots test_xzbudget test_unpack test_ring test_ahead test_hashq test_xzblk test_xzmt test_xzsink test_fetch
TSAN_BATS ?= components follow hashonce onepass mirror_repack
check-tsan:
	$(MAKE) BUILD=build-tsan CFLAGS="-O1 -g -fsanitize=thread -fno-omit-frame-pointer" all units
	export TSAN_OPTIONS="halt_on_error=1 exitcode=66 $${TSAN_OPTIONS:-}"; \
	for t in $(TSAN_UNITS); do build-tsan/tests/$$t || exit 1; done; \
	CUDAENV_TEST_BUILD=$(CURDIR)/build-tsan bats $(TSAN_BATS:%=tests/scenario/%.bats)

bench: all
	BUILD=$(BUILD) bench/run.sh

demo: all
	BUILD=$(BUILD) tools/demo.sh

# make mutate (CI's budget): every hand-written mutant's search text still matches (seconds),
# then MUTATE_SAMPLE generated mutants (tools/mutagen.py, docs/TESTING.md) per file of
# MUTATE_FILES with seed MUTATE_SEED, none started after MUTATE_BUDGET seconds; before them the
# hand-written MUTATE_HAND_CI (issue 42's) and MUTANTS="a b".  make mutate-hand: every
# hand-written mutant (140: tens of minutes);
# make mutate-full: those, then every generated mutant of the security and durability core.
MUTATE_CORE = src/core/trust.c $(sort $(wildcard src/system/system*.c)) src/manifest/index.c src/manifest/index_key.c \
	$(sort $(wildcard src/fetch/fetch*.c)) $(sort $(wildcard src/archive/unpack*.c)) src/archive/wheel.c $(sort $(wildcard src/archive/xz*.c)) \
	src/install/components.c src/install/parts.c src/store/compose.c src/store/modulefile.c $(sort $(wildcard src/mirror/mirror*.c))
MUTATE_FILES ?= src/core/trust.c src/manifest/index.c src/manifest/index_key.c src/store/compose.c src/store/modulefile.c \
	src/mirror/mirror_check.c src/mirror/mirror_dir.c
# the hand-written mutants of issue 42's slips (the root-trust, shell, state, resolution and
# archive checks the suite once let through): each runs one filtered test, ~8-30 s
MUTATE_HAND_CI ?= priv-openat-relative tmpdir-user-sticky tmpdir-under-user pyrun-tmpdir \
	toolchain-link-target adopt-link-target env-fish-backslash pending-symlink-read sysroot-prefix-slash \
	index-untagged-default forpython-cpu-tf unpack-sparse-sink wheel-python-kept modulefile-braces \
	builtin-manifest-dotdot
MUTATE_SAMPLE ?= 3
MUTATE_SEED ?= 1
MUTATE_BUDGET ?= 780
mutate: all
	tools/mutate.sh --check >/dev/null || tools/mutate.sh --check
	$(if $(strip $(MUTATE_HAND_CI) $(MUTANTS)),tools/mutate.sh $(MUTATE_HAND_CI) $(MUTANTS))
	tools/mutate.sh --generate --seed $(MUTATE_SEED) --sample $(MUTATE_SAMPLE) --budget $(MUTATE_BUDGET) $(MUTATE_FILES)

mutate-hand: all
	tools/mutate.sh

mutate-full: all
	tools/mutate.sh
	tools/mutate.sh --generate --sample all $(MUTATE_CORE)

# temp + rename: a failing generator leaves the manifest as it was.
# SIGN_KEY=key.pem (an ed25519 private key) also writes cudaenv.json.sig, the
# detached signature a published copy needs (man cudaenv-manifest: SIGNATURES),
# and needs SOURCE=URL, where it is published: its signed "source".
SIGN_KEY ?=
SOURCE ?=
manifest:
	@if [ -n "$(SIGN_KEY)" ] && [ -z "$(SOURCE)" ]; then \
	    echo "make manifest SIGN_KEY=...: add SOURCE=URL (where the signed copy is published)" >&2; exit 2; fi
	MANIFEST_SOURCE="$(SOURCE)" python3 tools/gen-manifest.py > share/manifests/cudaenv.json.tmp \
	    || { rm -f share/manifests/cudaenv.json.tmp; exit 1; }
	mv share/manifests/cudaenv.json.tmp share/manifests/cudaenv.json
	@if [ -n "$(SIGN_KEY)" ]; then \
	    openssl pkeyutl -sign -rawin -inkey "$(SIGN_KEY)" -in share/manifests/cudaenv.json | base64 -w0 \
	        > share/manifests/cudaenv.json.sig.tmp && mv share/manifests/cudaenv.json.sig.tmp share/manifests/cudaenv.json.sig \
	        && echo "signed: share/manifests/cudaenv.json.sig"; \
	fi

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(DATADIR)/manifests \
	    $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
	    $(DESTDIR)$(PREFIX)/share/zsh/site-functions \
	    $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 755 $(BIN) $(DESTDIR)$(BINDIR)/cudaenv
	install -m 755 $(FULL) $(DESTDIR)$(LIBEXECDIR)/cudaenv-full
	install -m 644 share/manifests/*.json $(DESTDIR)$(DATADIR)/manifests/
	install -d $(DESTDIR)$(DATADIR)/redist $(DESTDIR)$(DATADIR)/keys
	for k in share/keys/*.pem; do [ -e "$$k" ] && install -m 644 "$$k" $(DESTDIR)$(DATADIR)/keys/ || true; done
	install -m 644 data/redist/cuda/*.json $(DESTDIR)$(DATADIR)/redist/
	install -m 644 man/cudaenv.1 $(DESTDIR)$(MANDIR)/man1/cudaenv.1
	install -m 644 man/cudaenv-manifest.5 $(DESTDIR)$(MANDIR)/man5/cudaenv-manifest.5
	install -m 644 completions/cudaenv.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/cudaenv
	install -m 644 completions/_cudaenv $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_cudaenv
	install -m 644 completions/cudaenv.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/cudaenv.fish
	@# static shell integration (source it: no process at shell start), written by the
	@# installed binary so its paths are the installed ones (DESTDIR stripped)
	install -d $(DESTDIR)$(DATADIR)/init
	for sh in bash zsh fish; do \
	    f=$(DESTDIR)$(DATADIR)/init/cudaenv.$$sh; \
	    $(DESTDIR)$(BINDIR)/cudaenv init $$sh --static -q -o $$f >/dev/null || exit 1; \
	    if [ -n "$(DESTDIR)" ]; then sed -i 's|$(DESTDIR)||g' $$f; fi; \
	done

# Removes exactly what install put in place (toolchains in ~/.cudaenv are the user's).
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/cudaenv $(DESTDIR)$(LIBEXECDIR)/cudaenv-full \
	    $(DESTDIR)$(MANDIR)/man1/cudaenv.1 $(DESTDIR)$(MANDIR)/man5/cudaenv-manifest.5 \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions/cudaenv \
	    $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_cudaenv \
	    $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/cudaenv.fish
	rm -f $(DESTDIR)$(DATADIR)/manifests/*.json $(DESTDIR)$(DATADIR)/redist/*.json $(DESTDIR)$(DATADIR)/keys/*.pem \
	    $(DESTDIR)$(DATADIR)/init/cudaenv.bash $(DESTDIR)$(DATADIR)/init/cudaenv.zsh $(DESTDIR)$(DATADIR)/init/cudaenv.fish
	-rmdir $(DESTDIR)$(DATADIR)/manifests $(DESTDIR)$(DATADIR)/redist $(DESTDIR)$(DATADIR)/keys $(DESTDIR)$(DATADIR)/init \
	    $(DESTDIR)$(DATADIR) $(DESTDIR)$(LIBEXECDIR) 2>/dev/null

clean:
	rm -rf $(BUILD) build-asan build-dist dist

# The release (tools/dist.sh): DIST_ROOT=host builds on this machine's glibc instead
# of the Debian 11 root; RELEASE_BASE is the URL install.sh and self update fetch from.
RELEASE_BASE ?=
dist:
	SIGN_KEY="$(SIGN_KEY)" RELEASE_BASE="$(RELEASE_BASE)" tools/dist.sh

distcheck:
	tests/dist/check.sh

.PHONY: all units check check-asan check-tsan bench demo mutate mutate-hand mutate-full manifest install uninstall clean dist distcheck
-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# Fuzz the parsers (manifest, spec, archive entry policy, the .xz container
# against liblzma, a wheel's RECORD) with libFuzzer:
#   make fuzz FUZZ_SECONDS=60
FUZZ_SECONDS ?= 20
FUZZ_SRC = $(wildcard src/core/*.c src/machine/*.c src/manifest/*.c src/store/*.c src/doctor/*.c src/system/*.c src/install/*.c src/fetch/*.c src/archive/*.c src/mirror/*.c src/selftest/*.c)
fuzz:
	@mkdir -p build-fuzz/corpus
	for t in manifest spec entry xz record; do \
	    clang -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -iquote src \
	        -DCE_VERSION='"$(VERSION)"' -DCE_DATADIR='"$(DATADIR)"' \
	        $$($(PKG_CONFIG) --cflags libcjson) -o build-fuzz/fuzz_$$t tests/fuzz/fuzz_$$t.c $(FUZZ_SRC) \
	        $$($(PKG_CONFIG) --libs $(LIGHT_PKGS) $(HEAVY_PKGS)) -ldl -lpthread || exit 1; \
	    mkdir -p build-fuzz/corpus/$$t; [ $$t = manifest ] && cp tests/fuzz/seeds/manifest.json build-fuzz/corpus/$$t/; \
	    [ $$t = xz ] && { tests/fuzz/xz_seeds.sh build-fuzz/corpus/$$t || exit 1; }; \
	    [ $$t = record ] && cp tests/fuzz/seeds/RECORD build-fuzz/corpus/$$t/; \
	    build-fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) build-fuzz/corpus/$$t || exit 1; \
	done
.PHONY: fuzz
