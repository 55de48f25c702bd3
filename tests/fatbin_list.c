/* fatbin_list FILE: lists what CUDA fat binaries hold, one line per entry:
 * "FATBIN KIND ARCH", e.g. "0 elf 90" (FATBIN counts the fat binaries from
 * 0; KIND is elf for machine code, ptx for PTX; ARCH is 90 for sm_90).
 * FILE is a .nv_fatbin section, extracted with `objcopy -O binary
 * --only-section=.nv_fatbin`, so that the architectures in a module can be
 * checked where cuobjdump is not installed.
 *
 * The section is fat binaries back to back. Each is a 16-byte header
 * (u32 magic 0xBA55ED50, u16 version, u16 header size, u64 size of the
 * entries after the header), then entries: u16 kind (1 PTX, 2 ELF), u16,
 * u32 entry header size, u64 payload size, ..., u32 architecture at byte
 * 28; the payload follows the entry header. All little-endian.
 * Exit status: 0, or 1 with a message when FILE is not such a section. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define FATBIN_MAGIC 0xBA55ED50u
#define FATBIN_HEADER 16
#define ENTRY_HEADER_MIN 32 /* up to and including the architecture */

static uint64_t le(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static int bad(const char *path, uint64_t offset, const char *why) {
  fprintf(stderr, "fatbin_list: %s: at byte %" PRIu64 ": %s\n", path, offset, why);
  return 1;
}

/* The entries of the fat binary whose entries span [at, end). */
static int list_entries(const char *path, const unsigned char *d, uint64_t at, uint64_t end, int fatbin) {
  while (at < end) {
    if (end - at < ENTRY_HEADER_MIN) return bad(path, at, "entry header runs past the fat binary");
    const unsigned char *e = d + at;
    uint64_t kind = le(e, 2), header = le(e + 4, 4), payload = le(e + 8, 8);
    if (header < ENTRY_HEADER_MIN || header > end - at || payload > end - at - header)
      return bad(path, at, "entry sizes run past the fat binary");
    const char *name = kind == 1 ? "ptx" : kind == 2 ? "elf" : NULL;
    if (!name) return bad(path, at, "entry kind is neither 1 (PTX) nor 2 (ELF)");
    printf("%d %s %" PRIu64 "\n", fatbin, name, le(e + 28, 4));
    at += header + payload;
  }
  return 0;
}

static int list(const char *path, const unsigned char *d, uint64_t size) {
  int fatbin = 0;
  for (uint64_t at = 0; at < size; fatbin++) {
    if (size - at < FATBIN_HEADER) return bad(path, at, "fat binary header runs past the end");
    if (le(d + at, 4) != FATBIN_MAGIC) return bad(path, at, "no fat binary magic 0xBA55ED50");
    uint64_t header = le(d + at + 6, 2), body = le(d + at + 8, 8);
    if (header < FATBIN_HEADER || header > size - at || body > size - at - header)
      return bad(path, at, "fat binary sizes run past the end");
    if (list_entries(path, d, at + header, at + header + body, fatbin) != 0) return 1;
    at += header + body;
  }
  return 0;
}

/* The whole file (a section of a few MB), or NULL. */
static unsigned char *slurp(const char *path, uint64_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  unsigned char *d = n >= 0 && fseek(f, 0, SEEK_SET) == 0 ? malloc(n ? (size_t)n : 1) : NULL;
  if (d && fread(d, 1, (size_t)n, f) != (size_t)n) {
    free(d);
    d = NULL;
  }
  fclose(f);
  *size = (uint64_t)n;
  return d;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: fatbin_list SECTION.bin (a .nv_fatbin section from objcopy)\n");
    return 2;
  }
  uint64_t size = 0;
  unsigned char *d = slurp(argv[1], &size);
  if (!d) {
    fprintf(stderr, "fatbin_list: cannot read %s\n", argv[1]);
    return 1;
  }
  int rc = list(argv[1], d, size);
  free(d);
  return rc;
}
