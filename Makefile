# gcr — build, test, install. `make` builds the libraries and samples; `make test` builds and
# runs the suite (SAN=1 under AddressSanitizer + UBSan, TSAN=1 under ThreadSanitizer, each in its
# own build directory); `make run` runs the MobileNet-v3 sample.
# CUDA is auto-detected (CUDA=0 forces a CPU-only build); the library needs no nvcc: kernels are
# compiled at run time by NVRTC.

PREFIX   ?= /usr/local
BUILD    ?= build
CC       ?= cc
CUDA_HOME ?= /usr/local/cuda
SAN      ?= 0
TSAN     ?= 0

ifeq ($(origin CUDA), undefined)
  CUDA := $(if $(wildcard $(CUDA_HOME)/include/cuda_runtime.h),1,0)
endif
ifeq ($(SAN),1)
  # override: also when BUILD is given on the command line, so sanitized objects never mix in
  override BUILD := $(BUILD)-san
  SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif
ifeq ($(TSAN),1)
  override BUILD := $(BUILD)-tsan
  SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer
endif

# .deps/ holds headers and libraries carried to machines that lack the Debian packages
DEPS_INC := $(wildcard .deps/include)
DEPS_LIB := $(wildcard .deps/lib)

CPPFLAGS += -Iinclude -Ilib $(addprefix -I,$(DEPS_INC)) -D_GNU_SOURCE
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -Wall -Wextra -Wno-unused-parameter -fPIC -fvisibility=hidden $(SANFLAGS)
LDFLAGS  += $(SANFLAGS) $(addprefix -L,$(DEPS_LIB)) $(addprefix -Wl$(comma)-rpath$(comma),$(abspath $(DEPS_LIB)))
LIBS     := -lcjson -lm -lpthread -ldl
# what an installed libgcr needs beside itself (gcr.pc's Libs.private): the system's libraries and
# CUDA's directory, never a path into this tree
PC_LIBS  := $(LIBS)
comma := ,

SRC := $(wildcard lib/*.c lib/cpu/*.c capture/*.c replay/*.c)
ifeq ($(CUDA),1)
  SRC := $(filter-out lib/cuda_none.c,$(SRC)) $(wildcard lib/cuda/*.c)
  CPPFLAGS += -I$(CUDA_HOME)/include -DGCR_HAVE_CUDA=1
  LDFLAGS += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64
  LIBS += -lnvrtc -lcudart
  PC_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 $(LIBS)
  KERNELS := $(sort $(wildcard lib/cuda/kernels/*.cuh lib/cuda/kernels/*.h))
  GEN_SRC := $(BUILD)/gen/embedded_kernels.c
else
  # CUDA code generation writes text only: CPU-only builds keep it (tests generate every kernel)
  SRC := $(filter-out lib/cuda/%,$(SRC)) $(wildcard lib/cuda/codegen*.c lib/cuda/collapse.c)
  GEN_SRC :=
endif

OBJ := $(SRC:%.c=$(BUILD)/obj/%.o) $(GEN_SRC:%.c=%.o)
DEP := $(OBJ:.o=.d)

STATIC := $(BUILD)/lib/libgcr.a
SHARED := $(BUILD)/lib/libgcr.so
SAMPLES := $(patsubst samples/%.c,$(BUILD)/bin/%,$(wildcard samples/*.c))
TESTS := $(patsubst test/%.c,$(BUILD)/test/%,$(wildcard test/test_*.c))
BENCHES := $(patsubst bench/%.c,$(BUILD)/bench/%,$(wildcard bench/*.c))
ifneq ($(CUDA),1)
  # tests and benches that reach into the CUDA backend exist only in CUDA builds
  TESTS := $(filter-out $(BUILD)/test/test_cuda_% $(BUILD)/test/test_nvrtc $(BUILD)/test/test_codegen,$(TESTS))
  BENCHES :=
endif
# tests and samples link the static library so they run from the tree without LD_LIBRARY_PATH
LINK_GCR := $(STATIC) $(LDFLAGS) $(LIBS)

.PHONY: all deps lib samples run tests test bench install uninstall clean
all: lib samples

# installs missing Debian packages (uthash-dev, libcjson-dev); a no-op when present
deps:
	@sh tools/deps.sh
lib: $(STATIC) $(SHARED)
samples: $(SAMPLES)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/gen/embedded_kernels.c: $(KERNELS) tools/embed.sh
	@mkdir -p $(dir $@)
	sh tools/embed.sh $(KERNELS) > $@

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(STATIC): $(OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(SHARED): $(OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libgcr.so.$(shell sed -n 's/^#define GCR_VERSION_MAJOR //p' include/gcr.h) -o $@ $^ \
	  -Wl,-rpath,'$$ORIGIN' $(LDFLAGS) $(LIBS)

# programs record the headers they include (-MMD -MP: $@.d), so editing a test helper such as
# test/capture_util.h rebuilds the tests that use it
$(BUILD)/bin/%: samples/%.c $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fvisibility=default -MMD -MP -MF $@.d $< -o $@ $(LINK_GCR)

$(BUILD)/test/%: test/%.c $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itest $(CFLAGS) -MMD -MP -MF $@.d $< -o $@ $(LINK_GCR)

# test_oom fails each host allocation in turn: with --wrap the static library's own calls reach
# the test's wrappers (private: the library's objects keep their flags)
$(BUILD)/test/test_oom: private LINK_GCR += -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=aligned_alloc,--wrap=strdup,--wrap=free
$(BUILD)/test/test_oom: private CFLAGS += -fno-builtin

$(BUILD)/bench/%: bench/%.c $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -MF $@.d $< -o $@ $(LINK_GCR)


# the main job: MobileNet-v3 on the default device (GPU if present, else CPU)
run: $(BUILD)/bin/mobilenet_v3
	$(BUILD)/bin/mobilenet_v3 $(ARGS)

# the test binaries without running them (device scripts run them in their own time box)
tests: $(TESTS)

test: $(TESTS) $(SHARED) $(SAMPLES)
	@JOBS=$(or $(JOBS),1) BUILD=$(BUILD) CUDA=$(CUDA) SAN=$(SAN) TSAN=$(TSAN) CC="$(CC)" CPPFLAGS="$(CPPFLAGS)" CFLAGS="$(CFLAGS)" LINK="$(LINK_GCR)" sh test/run.sh $(TESTS)

bench: $(BENCHES)

# gcr.pc names only system libraries and CUDA's directory; libraries .deps/ stood in for (no Debian
# package on this machine) go beside libgcr, which finds them there ($$ORIGIN, first in its RUNPATH,
# before .deps/), so an install does not depend on this tree
install: lib
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 include/gcr.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(STATIC) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SHARED) $(DESTDIR)$(PREFIX)/lib/libgcr.so.0.1
	ln -sf libgcr.so.0.1 $(DESTDIR)$(PREFIX)/lib/libgcr.so.0
	ln -sf libgcr.so.0 $(DESTDIR)$(PREFIX)/lib/libgcr.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBS@|$(PC_LIBS)|' gcr.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/gcr.pc
	$(if $(DEPS_LIB),for f in $(DEPS_LIB)/lib*.so*; do [ -e "$$f" ] && cp -P "$$f" $(DESTDIR)$(PREFIX)/lib/; done; true)

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/include/gcr.h $(DESTDIR)$(PREFIX)/lib/libgcr.* $(DESTDIR)$(PREFIX)/lib/pkgconfig/gcr.pc
	$(if $(DEPS_LIB),for f in $(DEPS_LIB)/lib*.so*; do rm -f "$(DESTDIR)$(PREFIX)/lib/$${f##*/}"; done; true)

clean:
	rm -rf build build-san build-tsan

-include $(DEP) $(wildcard $(BUILD)/test/*.d $(BUILD)/bin/*.d $(BUILD)/bench/*.d)
