#define _GNU_SOURCE
#include "CEggsIO.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

int eggs_io_wake_pipe(int fds[2]) { return pipe2(fds, O_NONBLOCK | O_CLOEXEC); }

int eggs_io_timer(void) { return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC); }

int eggs_io_timer_set(int timer_fd, int64_t deadline_ns) {
    struct itimerspec value = {0};
    if (deadline_ns >= 0) {
        // An it_value of zero would disarm: a deadline at the clock's origin is long past anyway.
        if (deadline_ns == 0) deadline_ns = 1;
        value.it_value.tv_sec = (time_t)(deadline_ns / 1000000000);
        value.it_value.tv_nsec = (long)(deadline_ns % 1000000000);
    }
    return timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &value, NULL);
}

int eggs_io_wait(int fd, int wake_fd, int timer_fd) {
    struct pollfd fds[3] = {
        {.fd = fd, .events = POLLIN}, {.fd = wake_fd, .events = POLLIN}, {.fd = timer_fd, .events = POLLIN}};
    int ready = ppoll(fds, 3, NULL, NULL);
    if (ready < 0) return errno == EINTR ? 0 : -1;
    if (fds[1].revents) {
        unsigned char drain[64];
        while (read(wake_fd, drain, sizeof drain) > 0) {}
    }
    if (fds[2].revents) {
        uint64_t expirations;
        (void)!read(timer_fd, &expirations, sizeof expirations);
    }
    return (fds[0].revents & (POLLIN | POLLERR)) ? 1 : 0;
}

enum { EGGS_IO_BATCH_MAX = 64 };

int eggs_io_read(int fd, unsigned char *buffers, size_t slot_bytes, unsigned count,
                 uint32_t *lengths, void *source_buffer) {
    struct sockaddr_in *sources = source_buffer;
    if (count > EGGS_IO_BATCH_MAX) count = EGGS_IO_BATCH_MAX;
    struct mmsghdr messages[EGGS_IO_BATCH_MAX];
    struct iovec vectors[EGGS_IO_BATCH_MAX];
    memset(messages, 0, sizeof(struct mmsghdr) * count);
    for (unsigned i = 0; i < count; i++) {
        vectors[i].iov_base = buffers + i * slot_bytes;
        vectors[i].iov_len = slot_bytes;
        messages[i].msg_hdr.msg_iov = &vectors[i];
        messages[i].msg_hdr.msg_iovlen = 1;
        messages[i].msg_hdr.msg_name = &sources[i];
        messages[i].msg_hdr.msg_namelen = sizeof(struct sockaddr_in);
    }
    int got = recvmmsg(fd, messages, count, MSG_DONTWAIT, NULL);
    if (got < 0) return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
    for (int i = 0; i < got; i++) lengths[i] = messages[i].msg_len;
    return got;
}

void eggs_io_name_thread(unsigned long thread, const char *name) {
    char cut[16];
    strncpy(cut, name, sizeof cut - 1);
    cut[sizeof cut - 1] = 0;
    pthread_setname_np((pthread_t)thread, cut);
}
