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

#endif
