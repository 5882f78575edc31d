#include "digest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#define BLOCK (4u * 1024 * 1024)

struct ce_sha256 {
    EVP_MD_CTX *md;
    long long bytes;        /* hashed since the last reset (CUDAENV_TEST_HASH_LOG) */
};

/* Test hook: CUDAENV_TEST_HASH_LOG=FILE appends one line per digest
 * finished, the number of bytes it covered, so a scenario can count how
 * often an archive of a given size was hashed (issue 10: once). */
static void log_pass(long long bytes)
{
    const char *path = ce_settings_now()->test_hash_log;
    if (!path || !*path) return;
    /* never through a link (as root the seam needs the opt-in, core/priv.h) */
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return;
    char line[32];
    int n = snprintf(line, sizeof line, "%lld\n", bytes);
    if (write(fd, line, (size_t)n) < 0) {}
    close(fd);
}

ce_sha256 *ce_sha256_new(void)
{
    ce_sha256 *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->md = EVP_MD_CTX_new();
    if (!h->md || EVP_DigestInit_ex(h->md, EVP_sha256(), NULL) != 1) {
        ce_sha256_free(h);
        return NULL;
    }
    return h;
}

void ce_sha256_reset(ce_sha256 *h)
{
    EVP_DigestInit_ex(h->md, EVP_sha256(), NULL);
    h->bytes = 0;
}

void ce_sha256_update(ce_sha256 *h, const void *data, size_t len)
{
    if (len)
        EVP_DigestUpdate(h->md, data, len);
    h->bytes += (long long)len;
}

void ce_sha256_final(ce_sha256 *h, char hex[CE_SHA256_HEX])
{
    static const char digits[] = "0123456789abcdef";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(h->md, md, &n);
    log_pass(h->bytes);
    for (unsigned int i = 0; i < n && i < 32; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[64] = '\0';
    ce_sha256_reset(h);
}

void ce_sha256_free(ce_sha256 *h)
{
    if (!h)
        return;
    EVP_MD_CTX_free(h->md);
    free(h);
}

int ce_sha256_fd(ce_ctx *ctx, ce_sha256 *h, int fd, long long len, const char *path)
{
    unsigned char *buf = malloc(BLOCK);
    if (!buf)
        return ce_fail(ctx, CE_ERR_NOMEM, "out of memory hashing %s", path);
    long long done = 0;
    int rc = CE_OK;
    while (len < 0 || done < len) {
        size_t want = BLOCK;
        if (len >= 0 && (unsigned long long)(len - done) < want)
            want = (size_t)(len - done);
        ssize_t r = read(fd, buf, want);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = ce_fail(ctx, CE_ERR_IO, "cannot read %s: %s", path, strerror(errno));
            break;
        }
        if (r == 0) {
            if (len >= 0)
                rc = ce_fail(ctx, CE_ERR_IO, "%s ended after %lld of %lld bytes while hashing",
                             path, done, len);
            break;
        }
        ce_sha256_update(h, buf, (size_t)r);
        done += r;
    }
    free(buf);
    return rc;
}

int ce_sha256_file(ce_ctx *ctx, const char *path, char hex[CE_SHA256_HEX])
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ce_fail(ctx, errno == ENOENT ? CE_ERR_NOTFOUND : CE_ERR_IO,
                       "cannot open %s: %s", path, strerror(errno));
    /* One sequential pass: let the kernel read ahead aggressively. */
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    ce_sha256 *h = ce_sha256_new();
    if (!h) {
        close(fd);
        return ce_fail(ctx, CE_ERR_NOMEM, "out of memory hashing %s", path);
    }
    int rc = ce_sha256_fd(ctx, h, fd, -1, path);
    if (rc == CE_OK)
        ce_sha256_final(h, hex);
    ce_sha256_free(h);
    close(fd);
    return rc;
}

bool ce_sha256_valid(const char *s)
{
    if (!s)
        return false;
    size_t i = 0;
    for (; s[i]; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return i == 64;
}
