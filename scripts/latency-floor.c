// The machine's floor under `scripts/netbench.sh latency` (issue 14): N processes on 127.0.0.1,
// each multicasting a 64-byte datagram at a steady rate (TTL 0, loopback only) and receiving the
// others' in an event loop (ppoll until its next send is due), with no protocol at all. Prints the
// one-way latency percentiles of every delivery. Built and run by scripts/latency-floor.sh.
// Each process sends at a random phase within one interval, as `eggs-netbench latency`'s senders
// do (players are not in step). Until 2026-12-08 all sent at the same instants: every process was
// then awake at once, and the floor was 20-40 us lower at the median than for the same traffic
// spread out (docs/network.md, "Latency on one machine").
// A fifth argument, WORK (µs, default 0), spins that long on each received datagram before
// taking its delivery time: the floor of any code that spends WORK of CPU on a delivery
// (docs/network.md, "Latency on one machine").
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static double now_us(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv) {
    int peers = argc > 1 ? atoi(argv[1]) : 4, port = argc > 4 ? atoi(argv[4]) : 47999;
    double rate = argc > 2 ? atof(argv[2]) : 60, seconds = argc > 3 ? atof(argv[3]) : 20;
    double work = argc > 5 ? atof(argv[5]) : 0;
    int n = (int)(rate * seconds), fds[16][2];
    double start = now_us() + 500000;
    for (int p = 0; p < peers; p++) {
        pipe(fds[p]);
        if (fork() == 0) {
            alarm((unsigned)seconds + 10);
            int s = socket(AF_INET, SOCK_DGRAM, 0), one = 1, zero = 0;
            setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
            struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_ANY)};
            bind(s, (struct sockaddr *)&a, sizeof a);
            struct ip_mreq m = {.imr_multiaddr.s_addr = inet_addr("239.255.77.79"), .imr_interface.s_addr = htonl(INADDR_LOOPBACK)};
            setsockopt(s, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof m);
            struct in_addr lo = {htonl(INADDR_LOOPBACK)};
            setsockopt(s, IPPROTO_IP, IP_MULTICAST_IF, &lo, sizeof lo);
            setsockopt(s, IPPROTO_IP, IP_MULTICAST_TTL, &zero, sizeof zero);
            setsockopt(s, IPPROTO_IP, IP_MULTICAST_LOOP, &one, sizeof one);
            struct sockaddr_in g = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = inet_addr("239.255.77.79")};
            srand((unsigned)getpid() ^ (unsigned)now_us());
            start += (rand() / (double)RAND_MAX) * 1e6 / rate;  // this sender's phase
            double *lat = malloc(sizeof(double) * n * peers); int got = 0, sent = 0;
            double end = start + seconds * 1e6 + 200000;
            while (now_us() < end) {
                double due = sent < n ? start + sent * 1e6 / rate : end, wait = due - now_us();
                if (wait <= 0 && sent < n) {
                    char buf[64] = {0}; double t = now_us();
                    buf[0] = (char)p; memcpy(buf + 8, &t, sizeof t);
                    sendto(s, buf, sizeof buf, 0, (struct sockaddr *)&g, sizeof g); sent++; continue;
                }
                if (wait < 0) wait = 0;
                struct timespec ts = {(time_t)(wait / 1e6), (long)((wait - (time_t)(wait / 1e6) * 1e6) * 1e3)};
                struct pollfd pf = {s, POLLIN, 0};
                if (ppoll(&pf, 1, &ts, 0) > 0) {
                    char buf[64]; double t;
                    while (recv(s, buf, sizeof buf, MSG_DONTWAIT) == 64) {
                        memcpy(&t, buf + 8, sizeof t);
                        if (buf[0] != (char)p && got < n * peers) {
                            double until = now_us() + work;
                            while (now_us() < until) {}
                            lat[got++] = now_us() - t;
                        }
                    }
                }
            }
            write(fds[p][1], &got, sizeof got); write(fds[p][1], lat, sizeof(double) * got);
            _exit(0);
        }
        close(fds[p][1]);
    }
    double *all = malloc(sizeof(double) * n * peers * peers); int total = 0;
    for (int p = 0; p < peers; p++) {
        int got = 0; if (read(fds[p][0], &got, sizeof got) != sizeof got) continue;
        size_t need = sizeof(double) * got, have = 0;
        while (have < need) { ssize_t r = read(fds[p][0], (char *)(all + total) + have, need - have); if (r <= 0) break; have += r; }
        total += got;
    }
    while (wait(0) > 0) {}
    qsort(all, total, sizeof(double), cmp);
    int over = 0; for (int i = 0; i < total; i++) over += all[i] > 200;
    if (work > 0) printf("%.0f us of work a delivery, ", work);
    printf("%d peers x %.0f msg/s, %d deliveries: p50 %.0f us, p90 %.0f us, p99 %.0f us, p99.9 %.0f us, max %.0f us; over 200 us: %.2f %%\n",
           peers, rate, total, all[total / 2], all[(int)(total * .9)], all[(int)(total * .99)], all[(int)(total * .999)], all[total - 1], 100.0 * over / total);
    return 0;
}
