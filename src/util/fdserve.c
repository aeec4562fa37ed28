/* fdserve.c: handing file descriptors to other processes of the same user (fdserve.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "util/fdserve.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct kiln_fdserver {
    int lfd; /* the listening socket */
    int pid;
    uint8_t token[KILN_FDSERVE_TOKEN];
    pthread_mutex_t mu; /* guards fds */
    int fds[KILN_FDSERVE_SLOTS];
    char name[KILN_FDSERVE_NAME];
};

/* What an importer sends: the magic, the slot it wants and the token. */
typedef struct Request {
    uint32_t magic;
    uint32_t slot;
    uint8_t token[KILN_FDSERVE_TOKEN];
} Request;

enum {
    MAGIC = 0x316e6c6b, /* "kln1" */
    BACKLOG = 16,
    ST_OK = 0,      /* the descriptor comes with the reply */
    ST_REFUSED = 1, /* a bad request or token */
    ST_NONE = 2,    /* nothing offered in that slot */
};

static socklen_t address(const char *name, struct sockaddr_un *a) {
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    size_t n = strnlen(name, KILN_FDSERVE_NAME - 1);
    memcpy(a->sun_path + 1, name, n); /* sun_path[0] == 0: the abstract namespace */
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static void bound_waits(int fd) {
    struct timeval tv = {KILN_FDSERVE_TIMEOUT_MS / 1000, (KILN_FDSERVE_TIMEOUT_MS % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static bool same_user(int fd) {
    struct ucred cr;
    socklen_t len = sizeof cr;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 && cr.uid == geteuid();
}

static bool recv_all(int fd, void *buf, size_t n) {
    char *p = buf;
    while (n > 0) {
        ssize_t k = recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        p += k;
        n -= (size_t)k;
    }
    return true;
}

static bool tokens_equal(const uint8_t *a, const uint8_t *b) {
    uint8_t d = 0;
    for (int i = 0; i < KILN_FDSERVE_TOKEN; i++) d |= (uint8_t)(a[i] ^ b[i]);
    return d == 0;
}

static void serve_one(kiln_fdserver *s, int c) {
    bound_waits(c);
    Request rq;
    uint8_t status = ST_REFUSED;
    int give = -1;
    if (same_user(c) && recv_all(c, &rq, sizeof rq) && rq.magic == MAGIC &&
        rq.slot < KILN_FDSERVE_SLOTS && tokens_equal(rq.token, s->token)) {
        pthread_mutex_lock(&s->mu);
        give = s->fds[rq.slot];
        pthread_mutex_unlock(&s->mu);
        status = give >= 0 ? ST_OK : ST_NONE;
    }
    struct iovec iov = {&status, 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } u;
    if (status == ST_OK) {
        memset(&u, 0, sizeof u);
        msg.msg_control = u.buf;
        msg.msg_controllen = sizeof u.buf;
        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &give, sizeof(int));
    }
    while (sendmsg(c, &msg, MSG_NOSIGNAL) < 0 && errno == EINTR) {
    }
    close(c);
}

static void *serve(void *arg) {
    kiln_fdserver *s = arg;
    for (;;) {
        int c = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
        if (c >= 0) {
            serve_one(s, c);
        } else if (errno == EMFILE || errno == ENFILE || errno == ENOMEM || errno == ENOBUFS) {
            nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL); /* let descriptors free */
        } else if (errno != EINTR && errno != ECONNABORTED && errno != EPROTO) {
            return NULL; /* the socket is gone */
        }
    }
}

kiln_fdserver *kiln_fdserver_start(char name[KILN_FDSERVE_NAME],
                                   uint8_t token[KILN_FDSERVE_TOKEN], const char **why) {
    kiln_fdserver *s = calloc(1, sizeof *s);
    uint64_t tag = 0;
    if (!s) {
        *why = "out of memory";
        return NULL;
    }
    if (getrandom(s->token, sizeof s->token, 0) != (ssize_t)sizeof s->token ||
        getrandom(&tag, sizeof tag, 0) != (ssize_t)sizeof tag) {
        free(s);
        *why = "the system gave no random bytes (getrandom) for the handle's token";
        return NULL;
    }
    s->pid = (int)getpid();
    snprintf(s->name, sizeof s->name, "kiln-ipc-%u-%d-%016llx", (unsigned)geteuid(), s->pid,
             (unsigned long long)tag);
    for (int i = 0; i < KILN_FDSERVE_SLOTS; i++) s->fds[i] = -1;
    struct sockaddr_un a;
    socklen_t alen = address(s->name, &a);
    s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&a, alen) != 0 ||
        listen(s->lfd, BACKLOG) != 0) {
        if (s->lfd >= 0) close(s->lfd);
        free(s);
        *why = "a Unix socket to hand the memory's descriptor to other processes could not be "
               "opened";
        return NULL;
    }
    pthread_mutex_init(&s->mu, NULL);
    /* the thread takes no signals: Ctrl-C stays the main thread's */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    int rc = pthread_create(&t, &at, serve, s);
    pthread_attr_destroy(&at);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        close(s->lfd);
        pthread_mutex_destroy(&s->mu);
        free(s);
        *why = "the thread that hands the memory's descriptor to other processes could not start";
        return NULL;
    }
    memcpy(name, s->name, sizeof s->name);
    memcpy(token, s->token, sizeof s->token);
    return s;
}

int kiln_fdserver_pid(const kiln_fdserver *s) { return s->pid; }

void kiln_fdserver_forget(kiln_fdserver *s) {
    if (!s || s->pid == (int)getpid()) return; /* the process's own server stays */
    close(s->lfd);
    free(s); /* the parent's descriptors are the parent's: its fds[] are left alone */
}

int kiln_fdserver_offer(kiln_fdserver *s, int slot, int fd) {
    if (slot < 0 || slot >= KILN_FDSERVE_SLOTS) return -1;
    pthread_mutex_lock(&s->mu);
    s->fds[slot] = fd;
    pthread_mutex_unlock(&s->mu);
    return 0;
}

int kiln_fdserve_fetch(const char *name, const uint8_t token[KILN_FDSERVE_TOKEN], int slot,
                       const char **why) {
    struct sockaddr_un a;
    socklen_t alen = address(name, &a);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *why = "no socket could be opened to reach the process that shared the memory";
        return -1;
    }
    bound_waits(fd);
    int rc;
    while ((rc = connect(fd, (struct sockaddr *)&a, alen)) != 0 && errno == EINTR) {
    }
    if (rc != 0) {
        close(fd);
        *why = errno == EAGAIN || errno == ETIMEDOUT
                   ? "the process that shared the memory did not answer in time"
                   : "the process that shared the memory has ended (its handle is no longer "
                     "valid)";
        return -1;
    }
    if (!same_user(fd)) {
        close(fd);
        *why = "the process at the handle's address belongs to another user";
        return -1;
    }
    Request rq = {MAGIC, (uint32_t)slot, {0}};
    memcpy(rq.token, token, sizeof rq.token);
    ssize_t k;
    while ((k = send(fd, &rq, sizeof rq, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
    }
    uint8_t status = 0xff;
    struct iovec iov = {&status, 1};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } u;
    memset(&u, 0, sizeof u);
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                         .msg_controllen = sizeof u.buf};
    ssize_t got = -1;
    if (k == (ssize_t)sizeof rq)
        while ((got = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
        }
    int saved = errno;
    close(fd);
    int out = -1;
    struct cmsghdr *cm = got == 1 ? CMSG_FIRSTHDR(&msg) : NULL;
    if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
        cm->cmsg_len == CMSG_LEN(sizeof(int)))
        memcpy(&out, CMSG_DATA(cm), sizeof(int));
    if (got == 1 && status == ST_OK && out >= 0) return out;
    if (out >= 0) close(out);
    if (got < 0 && (saved == EAGAIN || saved == EWOULDBLOCK))
        *why = "the process that shared the memory did not answer in time";
    else if (got == 1 && status == ST_NONE)
        *why = "the process that shared the memory offers none of this device";
    else if (got == 1 && status == ST_REFUSED)
        *why = "the process that shared the memory refused the handle's token (a handle from "
               "an earlier run, or altered bytes)";
    else
        *why = "the process that shared the memory closed the connection";
    return -1;
}
