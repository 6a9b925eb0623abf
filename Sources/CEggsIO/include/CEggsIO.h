// The few Linux calls a peer's reading thread needs that Swift's Glibc module leaves out
// (they are declared only under _GNU_SOURCE, or in headers it does not map): ppoll, recvmmsg,
// pipe2, timerfd.
// The header includes no system header: Swift reaches those through its Glibc module.
#ifndef CEGGSIO_H
#define CEGGSIO_H

#include <stddef.h>
#include <stdint.h>

/// Opens a non-blocking, close-on-exec pipe: fds[0] to read, fds[1] to write. 0, or -1 and errno.
int eggs_io_wake_pipe(int fds[2]);

/// Opens a non-blocking, close-on-exec timer on CLOCK_MONOTONIC (timerfd), disarmed. The
/// descriptor, or -1 and errno.
int eggs_io_timer(void);

/// Arms `timer_fd` to expire once at `deadline_ns` on CLOCK_MONOTONIC (a deadline already past
/// expires at once), or disarms it when `deadline_ns` is negative. Any thread may re-arm it while
/// another waits on it. 0, or -1 and errno.
int eggs_io_timer_set(int timer_fd, int64_t deadline_ns);

/// Waits, with no timeout, until `fd` is readable, `wake_fd` is readable (then drains it) or
/// `timer_fd` expired (then reads the expiry, so the timer is quiet until armed again). Returns 1
/// when `fd` is readable, 0 otherwise (woken, expired, interrupted), -1 on another error (errno).
int eggs_io_wait(int fd, int wake_fd, int timer_fd);

/// Reads up to `count` datagrams from non-blocking `fd` in one recvmmsg: datagram i into
/// `buffers + i * slot_bytes`, its length into `lengths[i]` (at most `slot_bytes`; a longer one is
/// cut), its source into `sources[i]` (`sources` holds `count` struct sockaddr_in). Returns how many were read: 0 when
/// none was waiting, -1 on an error other than EAGAIN (errno).
int eggs_io_read(int fd, unsigned char *buffers, size_t slot_bytes, unsigned count,
                 uint32_t *lengths, void *sources);

/// Names `thread` (a pthread_t; at most 15 bytes are kept), as `top -H`, `perf` and /proc show it.
void eggs_io_name_thread(unsigned long thread, const char *name);

#endif
