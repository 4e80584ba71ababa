/* tests/unit/udpsh_fixture.c: the UDP shell's admission as its unit tests drive it (udpsh_fixture.h). */
#include <string.h>

#include "fixed_keys.h"
#include "udpsh_fixture.h"
#include "udpsh_requests.h"

struct udpsh_auth auth;
struct udpsh_judgement j;
uint8_t secret[32], key[16];
struct udpsh_remembered *running_request;

void udpsh_fixture_init(bool keyed)
{
    fixed_keys_fill(secret, key);
    udpsh_auth_init(&auth, secret, keyed ? key : NULL, keyed ? sizeof key : 0);
    running_request = NULL;
}

void judge(uint32_t ip, uint16_t port, const char *datagram, int64_t now)
{
    udpsh_auth_judge(&auth, ip, port, (const uint8_t *)datagram, strlen(datagram), now, running_request, &j);
}

void keyed(uint32_t ip, uint16_t port, uint64_t counter, const char *line, int64_t now)
{
    char datagram[700];
    udpsh_keyed_datagram(&auth, key, sizeof key, ip, port, now / UDPSH_TOKEN_WINDOW_NS, counter, line, datagram,
                         sizeof datagram);
    judge(ip, port, datagram, now);
}
