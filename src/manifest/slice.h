/* The manifest cut to what one command reads (issue 43: info's cost flat in
 * the manifest's size).  A slice is a smaller manifest document, parsed and
 * validated as any (manifest.h): what it holds is byte for byte the
 * manifest's own, so resolving in it gives what resolving in the whole
 * gives. */
#ifndef CE_SLICE_H
#define CE_SLICE_H

#include <stddef.h>

/* The manifest text[0..len) (text[len] a NUL; the text is written to and put
 * back) cut to TensorFlow row tf ("2.14"): every top-level member as it is,
 * except "tensorflow" with only that row, "cuda" with only the release the
 * row names, "cudnn" with only its cuDNN (or none), and "torch" and "jax"
 * left out.  A malloc'ed text (*outlen bytes), or NULL: the row is missing,
 * names no CUDA release the manifest has, or the text is not what a
 * manifest looks like (parse the whole then: its errors are the ones to
 * show). */
char *ce_manifest_slice_tf(char *text, size_t len, const char *tf, size_t *outlen);

/* The same cut to a CUDA release named by version ("12.4" or "12.4.1": a
 * '.' in it): "cuda" with the releases version names (itself, or those it
 * is a prefix of, up to a '.'), "cudnn" with every release that has a build
 * for that CUDA major ("cuda12": the candidates of an implicit pick),
 * "tensorflow" empty, "torch" and "jax" left out.  NULL when no release
 * matches or the text is not a manifest's shape (parse the whole). */
char *ce_manifest_slice_cuda(char *text, size_t len, const char *version, size_t *outlen);

/* The same cut to PyTorch or JAX release version (name "torch" or "jax";
 * the release's exact key): that framework's section with only the
 * release, "cuda" and "cudnn" with the releases its builds name,
 * "tensorflow" empty, the other framework left out.  NULL when the release
 * is missing (an alias: "0.4", "latest") or the text is not a manifest's
 * shape (parse the whole). */
char *ce_manifest_slice_fw(char *text, size_t len, const char *name, const char *version, size_t *outlen);
/* One of the three by kind: "tensorflow", "cuda", "torch" or "jax". */
char *ce_manifest_slice(char *text, size_t len, const char *kind, const char *version, size_t *outlen);

/* Where the pieces are, so that a slice is cut without reading the rest
 * (the resolution index carries these records, manifest/index.h): one line
 * a member, "at - NAME AT END" for each top-level member (AT its key's
 * quote, END one past its value: byte offsets in the manifest file), then
 * "at SECTION KEY AT END BUILDS" for each member of "tensorflow", "cuda",
 * "cudnn", "torch" and "jax" (BUILDS: a cuDNN release's "cudaN" keys,
 * comma-separated; "-" for none and for the other sections).  A malloc'ed
 * text; NULL when the text is not a manifest's shape or has a key the
 * records cannot carry (a space, a quote, an escape: no records then). */
char *ce_manifest_slice_records(char *text, size_t len);
/* The manifest file open as fd cut by its records (recs: the first record's
 * line with the '\n' before it, as the index holds them; offsets checked
 * against the keys they name) to the members a slice of kind/version takes:
 * a small manifest text the slicers above cut as they cut the whole, to the
 * same bytes.  NULL when a record is missing or does not match the file
 * (slice the whole text then). */
char *ce_manifest_slice_pieces(int fd, const char *recs, const char *kind, const char *version, size_t *outlen);

#endif
