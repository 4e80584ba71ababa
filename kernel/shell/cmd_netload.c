/* kernel/shell/cmd_netload.c: the `netload` shell command -- its words parsed into a request, the session started
 * and waited for (kernel/net/netload.c), and the figures printed. */
#include "kernel/shell/commands.h"
#include "kernel/net/netload.h"
#include "kernel/lib/parse.h"
#include "kernel/lib/string.h"

static bool parse_request(int argc, char **argv, struct netload_request *req)
{
    uint64_t port, seconds, size = NETLOAD_SIZE_DEFAULT, pps = NETLOAD_PPS_DEFAULT;
    uint32_t host = 0;
    if (argc >= 2 && strcmp(argv[1], "send") == 0 && argc >= 5 && argc <= 7 && parse_ipv4(argv[2], &host) &&
        parse_u64_range(argv[3], 1, 65535, &port) && parse_u64_range(argv[4], 1, NETLOAD_MAX_SECONDS, &seconds) &&
        (argc < 6 || parse_u64_range(argv[5], NETLOAD_HEADER_SIZE, NETLOAD_SIZE_MAX, &size)) &&
        (argc < 7 || parse_u64_range(argv[6], 0, NETLOAD_PPS_MAX, &pps)))
        req->mode = NETLOAD_SEND;
    else if (argc == 4 && (strcmp(argv[1], "sink") == 0 || strcmp(argv[1], "echo") == 0) &&
             parse_u64_range(argv[2], 1, 65535, &port) && parse_u64_range(argv[3], 1, NETLOAD_MAX_SECONDS, &seconds))
        req->mode = strcmp(argv[1], "sink") == 0 ? NETLOAD_SINK : NETLOAD_ECHO;
    else
        return false;
    req->host = host;
    req->port = (uint16_t)port;
    req->seconds = (uint32_t)seconds;
    req->size = (uint32_t)size;
    req->pps = (uint32_t)pps;
    return true;
}

int cmd_netload(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    struct netload_request req;
    if (!parse_request(argc, argv, &req))
        return shell_usage(out, "netload");
    req.until_ns = from->udp ? from->until_ns : 0; /* set for unkeyed UDP requests only */
    const char *mode = netload_mode_name(req.mode);
    const char *unlabelled_why;
    switch (netload_start(&req, &unlabelled_why)) {
    case NETLOAD_STARTED:
        break;
    case NETLOAD_NO_NETWORK:
        sink_puts(out, "netload: no network interface\n");
        return 1;
    case NETLOAD_BUSY:
        sink_puts(out, "netload: busy (another netload is running)\n");
        return 1;
    case NETLOAD_CANNOT_LISTEN:
        sink_printf(out, "netload: cannot listen on UDP port %u (in use, or too many ports)\n",
                    req.mode == NETLOAD_SEND ? NETLOAD_SEND_PORT : req.port);
        return 1;
    }
    if (unlabelled_why)
        sink_printf(out, "netload: the network task runs unlabelled: %s\n", unlabelled_why);
    if (req.mode != NETLOAD_SEND)
        sink_printf(out, "netload: %s on UDP port %u for %u s\n", mode, req.port, req.seconds);

    struct netload_result r;
    netload_finish(&r);
    if (req.mode == NETLOAD_SEND) {
        sink_puts(out, "netload send: ");
        netload_report_tx(out, r.sent, r.sent_bytes, r.elapsed_ns);
        if (r.send_failed)
            sink_printf(out, "netload: the transmit ring was full %llu times (sending waited)\n",
                        (unsigned long long)r.send_failed);
        if (r.send_held)
            sink_printf(out, "netload: lwIP held sending %llu times while it resolved the host's address (sending "
                             "waited)\n",
                        (unsigned long long)r.send_held);
        if (r.token_expired)
            sink_puts(out, "netload: stopped when the token of the unkeyed request that started it expired "
                           "(a keyed request is not cut short)\n");
        if (r.rx.packets) {
            sink_puts(out, "netload echoes: ");
            netload_report_rx(out, &r.rx, r.elapsed_ns);
        }
    } else {
        sink_printf(out, "netload %s: ", mode);
        netload_report_rx(out, &r.rx, r.elapsed_ns);
        if (req.mode == NETLOAD_ECHO)
            sink_printf(out, "netload echo: %llu datagrams sent back\n", (unsigned long long)r.echoed);
    }
    return 0;
}
