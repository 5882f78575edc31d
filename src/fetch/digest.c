#include "digest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "core/fault.h"

#define BLOCK (4u * 1024 * 1024)

struct ce_sha256 {
    EVP_MD_CTX *md;
    long long bytes;        /* hashed since the last reset (the "digest" fault point) */
};

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
    ce_fault_point("digest", &h->bytes);   /* tests count the passes (core/fault.h) */
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

int ce_sha256_fd(ce_sha256 *h, int fd, long long len, const char *path)
{
    unsigned char *buf = malloc(BLOCK);
    if (!buf)
        return ce_fail(CE_ERR_NOMEM, "out of memory hashing %s", path);
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
            rc = ce_fail(CE_ERR_IO, "cannot read %s: %s", path, strerror(errno));
            break;
        }
        if (r == 0) {
            if (len >= 0)
                rc = ce_fail(CE_ERR_IO, "%s ended after %lld of %lld bytes while hashing",
                             path, done, len);
            break;
        }
        ce_sha256_update(h, buf, (size_t)r);
        done += r;
    }
    free(buf);
    return rc;
}

int ce_sha256_file(const char *path, char hex[CE_SHA256_HEX])
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ce_fail(errno == ENOENT ? CE_ERR_NOTFOUND : CE_ERR_IO,
                       "cannot open %s: %s", path, strerror(errno));
    /* One sequential pass: let the kernel read ahead aggressively. */
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    ce_sha256 *h = ce_sha256_new();
    if (!h) {
        close(fd);
        return ce_fail(CE_ERR_NOMEM, "out of memory hashing %s", path);
    }
    int rc = ce_sha256_fd(h, fd, -1, path);
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
