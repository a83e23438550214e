# Convenience front end over CMake: `make`, `make test`, `make install PREFIX=...`.
PREFIX ?= /usr/local
BUILD  ?= build

.PHONY: all test asan tsan install uninstall report format clean

all:
	scripts/build.sh release

test:
	scripts/test.sh

asan:
	scripts/build.sh asan

tsan:
	scripts/build.sh tsan

install: all
	cmake --install $(BUILD) --prefix "$(DESTDIR)$(PREFIX)"

report: all
	$(BUILD)/bpfmap-bench --report

format:
	clang-format -i include/*.h src/*/*.[ch] tests/*.[ch] examples/*.c $(wildcard bench/*.[ch])

clean:
	rm -rf build build-asan build-tsan
