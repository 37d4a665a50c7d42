/*
 * aether-cni: the CNI plugin binary a container runtime execs, built static (gcc -static -Os) so
 * it runs on hosts with neither Deno nor glibc. It is a forwarder: the plugin's logic is the node
 * agent's (cni/handler.ts). It
 *   - answers VERSION itself;
 *   - applies the one rule skipped pods need without the agent (cni/conf.ts skipReason: not a
 *     Kubernetes pod, a namespace the configuration excludes, a pod annotated
 *     aether.io/capture: "false"): ADD prints prevResult, CHECK succeeds;
 *   - otherwise passes its CNI_* environment and stdin to the agent's unix socket (cni/protocol.ts
 *     frames) and prints the agent's reply and exit code;
 *   - when the agent is unreachable or does not answer within timeoutSeconds + 5 s, answers
 *     itself: ADD, CHECK and GC error 11 ("try again later": no pod starts uncaptured), STATUS
 *     error 50, DEL success (best effort: the netns is going away; the agent forgets attachments
 *     whose netns is gone when it starts).
 * It reads JSON only to find the few keys above, with a validating scanner that never copies out
 * of bounds; cni/conf_test.ts holds its answers to the TypeScript ones.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONF (1 << 20)
#define MAX_ENV (64 << 10)
#define MAX_OUT (4 << 20)
#define MAX_ERR (64 << 10)
#define MAX_DEPTH 64
#define DEFAULT_SOCKET "/run/aether/cni.sock"
#define DEFAULT_TIMEOUT 30.0
#define MAX_TIMEOUT 100.0
#define MARGIN 5.0

static const char *const VERSIONS[] = {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"};
static const char *const CNI_ENV[] = {"CNI_COMMAND", "CNI_CONTAINERID", "CNI_NETNS",
                                      "CNI_IFNAME",  "CNI_ARGS",        "CNI_PATH"};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- JSON: a validating scanner over [p, e) ---- */

static const char *ws(const char *p, const char *e) {
  while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  return p;
}

static int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* The end of the string token at p (p at its opening quote), or NULL when malformed. */
static const char *skip_string(const char *p, const char *e) {
  for (p++; p < e; p++) {
    unsigned char c = (unsigned char)*p;
    if (c == '"') return p + 1;
    if (c < 0x20) return NULL;
    if (c != '\\') continue;
    if (++p >= e) return NULL;
    if (*p == 'u') {
      if (e - p < 5) return NULL;
      for (int i = 1; i <= 4; i++)
        if (hex(p[i]) < 0) return NULL;
      p += 4;
    } else if (!(*p == '"' || *p == '\\' || *p == '/' || *p == 'b' || *p == 'f' || *p == 'n' ||
                 *p == 'r' || *p == 't')) {
      return NULL;
    }
  }
  return NULL;
}

static const char *skip_digits(const char *p, const char *e) {
  while (p < e && *p >= '0' && *p <= '9') p++;
  return p;
}

/* A JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static const char *skip_number(const char *p, const char *e) {
  if (p < e && *p == '-') p++;
  if (p >= e || *p < '0' || *p > '9') return NULL;
  p = *p == '0' ? p + 1 : skip_digits(p, e);
  if (p < e && *p == '.') {
    const char *q = skip_digits(p + 1, e);
    if (q == p + 1) return NULL;
    p = q;
  }
  if (p < e && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < e && (*p == '+' || *p == '-')) p++;
    const char *q = skip_digits(p, e);
    if (q == p) return NULL;
    p = q;
  }
  return p;
}

static const char *skip_literal(const char *p, const char *e, const char *word) {
  size_t n = strlen(word);
  return (size_t)(e - p) >= n && memcmp(p, word, n) == 0 ? p + n : NULL;
}

/* The end of the value at p (after leading space), or NULL when malformed or nested too deep. */
static const char *skip_value(const char *p, const char *e, int depth) {
  p = ws(p, e);
  if (p >= e) return NULL;
  if (*p == '"') return skip_string(p, e);
  if (*p == 't') return skip_literal(p, e, "true");
  if (*p == 'f') return skip_literal(p, e, "false");
  if (*p == 'n') return skip_literal(p, e, "null");
  if (*p != '{' && *p != '[') return skip_number(p, e);
  if (depth >= MAX_DEPTH) return NULL;
  int object = *p == '{';
  char close = object ? '}' : ']';
  p = ws(p + 1, e);
  if (p < e && *p == close) return p + 1;
  for (;;) {
    if (object) {
      p = ws(p, e);
      if (p >= e || *p != '"' || !(p = skip_string(p, e))) return NULL;
      p = ws(p, e);
      if (p >= e || *p != ':') return NULL;
      p++;
    }
    if (!(p = skip_value(p, e, depth + 1))) return NULL;
    p = ws(p, e);
    if (p >= e) return NULL;
    if (*p == close) return p + 1;
    if (*p != ',') return NULL;
    p++;
  }
}

/* Decodes the string token [p, end) (quotes included) into out (NUL-terminated, ASCII only):
 * 1 on success, 0 when it holds a non-ASCII character or NUL, or does not fit. */
static int decode_ascii(const char *p, const char *end, char *out, size_t size) {
  size_t n = 0;
  for (p++, end--; p < end; p++) {
    int c = (unsigned char)*p;
    if (c == '\\') {
      p++;
      switch (*p) {
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'n': c = '\n'; break;
        case 'r': c = '\r'; break;
        case 't': c = '\t'; break;
        case 'u':
          c = hex(p[1]) << 12 | hex(p[2]) << 8 | hex(p[3]) << 4 | hex(p[4]);
          p += 4;
          break;
        default: c = (unsigned char)*p;
      }
    }
    if (c == 0 || c >= 0x80 || n + 1 >= size) return 0;
    out[n++] = (char)c;
  }
  out[n] = 0;
  return 1;
}

/* Whether the string token [p, end) decodes to the ASCII string want. */
static int string_is(const char *p, const char *end, const char *want) {
  char buf[512];
  if (*p != '"' || strlen(want) >= sizeof buf) return 0;
  return decode_ascii(p, end, buf, sizeof buf) && strcmp(buf, want) == 0;
}

/* The value of the object [p, e)'s last member named key: 1 and its span, or 0. The object was
 * validated whole (skip_value) before any lookup, so its tokens are well formed. */
static int member(const char *p, const char *e, const char *key, const char **vp, const char **ve) {
  int found = 0;
  p = ws(p, e);
  if (p >= e || *p != '{') return 0;
  p = ws(p + 1, e);
  if (p < e && *p == '}') return 0;
  while (p < e) {
    p = ws(p, e);
    const char *k = p, *kend = skip_string(p, e);
    if (!kend) return 0;
    p = ws(kend, e) + 1;
    const char *v = ws(p, e), *vend = skip_value(v, e, 1);
    if (!vend) return 0;
    if (string_is(k, kend, key)) {
      *vp = v;
      *ve = vend;
      found = 1;
    }
    p = ws(vend, e);
    if (p >= e || *p != ',') break;
    p++;
  }
  return found;
}

/* Whether the array [p, e) holds a string equal to want. */
static int array_has(const char *p, const char *e, const char *want) {
  p = ws(p, e);
  if (p >= e || *p != '[') return 0;
  p = ws(p + 1, e);
  if (p < e && *p == ']') return 0;
  while (p < e) {
    const char *v = ws(p, e), *vend = skip_value(v, e, 1);
    if (!vend) return 0;
    if (*v == '"' && string_is(v, vend, want)) return 1;
    p = ws(vend, e);
    if (p >= e || *p != ',') break;
    p++;
  }
  return 0;
}

/* ---- the configuration's keys, as cni/conf.ts reads them ---- */

struct conf {
  const char *text, *end; /* stdin; valid = it is one JSON object */
  int valid;
  char version[64];
  char socket[108];
  double timeout;
};

static void read_conf(struct conf *c, const char *text, size_t n) {
  const char *v, *ve;
  c->text = text;
  c->end = text + n;
  const char *p = ws(text, c->end);
  const char *after = p < c->end && *p == '{' ? skip_value(p, c->end, 0) : NULL;
  c->valid = after && ws(after, c->end) == c->end;
  strcpy(c->version, "1.0.0");
  strcpy(c->socket, DEFAULT_SOCKET);
  c->timeout = DEFAULT_TIMEOUT;
  if (!c->valid) return;
  char buf[sizeof c->version];
  if (member(text, c->end, "cniVersion", &v, &ve) && *v == '"' &&
      decode_ascii(v, ve, buf, sizeof buf) && buf[0])
    strcpy(c->version, buf);
  char path[sizeof c->socket];
  if (member(text, c->end, "socketPath", &v, &ve) && *v == '"' &&
      decode_ascii(v, ve, path, sizeof path) && path[0])
    strcpy(c->socket, path);
  if (member(text, c->end, "timeoutSeconds", &v, &ve) && (*v == '-' || (*v >= '0' && *v <= '9'))) {
    char num[64];
    size_t len = (size_t)(ve - v);
    if (len < sizeof num) {
      memcpy(num, v, len);
      num[len] = 0;
      double t = strtod(num, NULL);
      if (t > 0 && t <= MAX_TIMEOUT) c->timeout = t;
    }
  }
}

/* The last value of key in CNI_ARGS (K=V;K=V, split at the first '='), copied into out: 1 when
 * present and non-empty (a value too long for out is marked by out[0] = 0, matching nothing),
 * else 0. */
static int cni_arg(const char *args, const char *key, char *out, size_t size) {
  int found = 0;
  size_t klen = strlen(key);
  for (const char *p = args; p && *p;) {
    const char *semi = strchr(p, ';');
    size_t len = semi ? (size_t)(semi - p) : strlen(p);
    const char *eq = memchr(p, '=', len);
    if (eq && (size_t)(eq - p) == klen && memcmp(p, key, klen) == 0) {
      size_t vlen = len - klen - 1;
      found = vlen > 0;
      if (vlen < size) {
        memcpy(out, eq + 1, vlen);
        out[vlen] = 0;
      } else {
        out[0] = 0;
      }
    }
    p = semi ? semi + 1 : NULL;
  }
  return found;
}

/* cni/conf.ts skipReason, for ADD and CHECK: NULL when the agent decides. */
static const char *skip_reason(const struct conf *c, const char *args) {
  char ns[1024], name[1024];
  const char *v, *ve, *a, *ae, *x, *xe;
  if (!c->valid) return NULL;
  if (!cni_arg(args ? args : "", "K8S_POD_NAMESPACE", ns, sizeof ns) ||
      !cni_arg(args ? args : "", "K8S_POD_NAME", name, sizeof name))
    return "not a Kubernetes pod";
  if (member(c->text, c->end, "excludeNamespaces", &v, &ve) && *v == '[') {
    if (ns[0] && array_has(v, ve, ns)) return "namespace excluded";
  } else if (strcmp(ns, "kube-system") == 0) {
    return "namespace excluded";
  }
  if (member(c->text, c->end, "runtimeConfig", &v, &ve) &&
      member(v, ve, "io.kubernetes.cri.pod-annotations", &a, &ae) &&
      member(a, ae, "aether.io/capture", &x, &xe) && *x == '"' && string_is(x, xe, "false"))
    return "pod opted out";
  return NULL;
}

/* ---- output ---- */

static void write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= (size_t)w;
  }
}

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

/* Prints a CNI error and returns the exit code 1. */
static int cni_error(const char *version, int code, const char *msg, const char *details) {
  fputs("{\"cniVersion\":", stdout);
  json_string(stdout, version);
  printf(",\"code\":%d,\"msg\":", code);
  json_string(stdout, msg);
  if (details) {
    fputs(",\"details\":", stdout);
    json_string(stdout, details);
  }
  fputs("}\n", stdout);
  return 1;
}

/* ---- the agent's socket ---- */

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Waits for fd to be ready for events before deadline: 1 ready, 0 timed out, -1 error. */
static int wait_fd(int fd, short events, double deadline) {
  for (;;) {
    double left = deadline - now();
    if (left <= 0) return 0;
    struct pollfd p = {.fd = fd, .events = events};
    int r = poll(&p, 1, (int)(left * 1000) + 1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) continue;
    return 1;
  }
}

static int send_all(int fd, const char *p, size_t n, double deadline) {
  while (n > 0) {
    if (wait_fd(fd, POLLOUT, deadline) <= 0) return -1;
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Reads exactly n bytes: 0 ok, -1 closed or failed, -2 timed out. */
static int recv_all(int fd, char *p, size_t n, double deadline) {
  while (n > 0) {
    int r = wait_fd(fd, POLLIN, deadline);
    if (r == 0) return -2;
    if (r < 0) return -1;
    ssize_t got = recv(fd, p, n, 0);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) return -1;
    p += got;
    n -= (size_t)got;
  }
  return 0;
}

static void put_u32(char *p, uint32_t v) {
  p[0] = (char)(v >> 24);
  p[1] = (char)(v >> 16);
  p[2] = (char)(v >> 8);
  p[3] = (char)v;
}

static uint32_t get_u32(const char *p) {
  const unsigned char *u = (const unsigned char *)p;
  return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

struct reply {
  int exit_code;
  char *out, *err;
  uint32_t out_len, err_len;
};

/* Forwards the invocation: 0 with the reply, else -1 unreachable (why in `why`), -2 no answer. */
static int forward(const struct conf *c, const char *stdin_text, size_t stdin_len,
                   struct reply *r, char *why, size_t why_size) {
  static char env[MAX_ENV];
  size_t env_len = 0;
  for (size_t i = 0; i < COUNT(CNI_ENV); i++) {
    const char *v = getenv(CNI_ENV[i]);
    if (!v) continue;
    int n = snprintf(env + env_len, sizeof env - env_len, "%s=%s", CNI_ENV[i], v);
    if (n < 0 || (size_t)n + 1 >= sizeof env - env_len) break;
    env_len += (size_t)n + 1; /* keep the NUL */
  }
  double deadline = now() + c->timeout + MARGIN;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    snprintf(why, why_size, "socket: %s", strerror(errno));
    return -1;
  }
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  strncpy(addr.sun_path, c->socket, sizeof addr.sun_path - 1);
  /* A full backlog (EAGAIN) is a busy agent: try again until the deadline. */
  while (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
    if (errno == EINTR) continue;
    if (errno == EAGAIN && now() < deadline) {
      nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
      continue;
    }
    if (errno == EAGAIN) {
      close(fd);
      return -2;
    }
    snprintf(why, why_size, "%s", strerror(errno));
    close(fd);
    return -1;
  }
  size_t frame_len = 4 + 4 + env_len + 4 + stdin_len;
  char *frame = malloc(frame_len);
  if (!frame) {
    snprintf(why, why_size, "out of memory");
    close(fd);
    return -1;
  }
  memcpy(frame, "ACN1", 4);
  put_u32(frame + 4, (uint32_t)env_len);
  memcpy(frame + 8, env, env_len);
  put_u32(frame + 8 + env_len, (uint32_t)stdin_len);
  memcpy(frame + 12 + env_len, stdin_text, stdin_len);
  int sent = send_all(fd, frame, frame_len, deadline);
  free(frame);
  if (sent < 0) {
    snprintf(why, why_size, "%s", errno ? strerror(errno) : "the connection closed");
    close(fd);
    return -1;
  }
  char head[12];
  int got = recv_all(fd, head, sizeof head, deadline);
  if (got == 0 && memcmp(head, "ACN1", 4) != 0) got = -1;
  if (got == 0) {
    r->exit_code = (int)(get_u32(head + 4) & 0xff);
    r->out_len = get_u32(head + 8);
    if (r->out_len > MAX_OUT) got = -1;
  }
  if (got == 0 && !(r->out = malloc(r->out_len + 1))) got = -1;
  if (got == 0) got = recv_all(fd, r->out, r->out_len, deadline);
  if (got == 0) got = recv_all(fd, head, 4, deadline);
  if (got == 0 && (r->err_len = get_u32(head)) > MAX_ERR) got = -1;
  if (got == 0 && !(r->err = malloc(r->err_len + 1))) got = -1;
  if (got == 0) got = recv_all(fd, r->err, r->err_len, deadline);
  close(fd);
  if (got == -2) return -2;
  if (got < 0) {
    snprintf(why, why_size, "the agent closed the connection without a whole answer");
    return -1;
  }
  return 0;
}

/* ---- main ---- */

static const char *const RETRY =
    "the pod's traffic cannot be captured yet, so its sandbox does not start; the runtime retries "
    "it. Check the aether agent pod on this node (DaemonSet aether-agent) and its log";

int main(void) {
  const char *cmd = getenv("CNI_COMMAND");
  static char text[MAX_CONF + 1];
  size_t n = 0;
  for (;;) {
    ssize_t got = read(0, text + n, sizeof text - n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    n += (size_t)got;
    if (n == sizeof text) break;
  }
  struct conf c;
  read_conf(&c, text, n > MAX_CONF ? 0 : n);
  if (!cmd || !*cmd) return cni_error(c.version, 4, "CNI_COMMAND is not set", NULL);
  if (strcmp(cmd, "VERSION") == 0) {
    const char *v = "1.0.0";
    for (size_t i = 0; i < COUNT(VERSIONS); i++)
      if (strcmp(c.version, VERSIONS[i]) == 0 && c.valid) v = VERSIONS[i];
    printf("{\"cniVersion\":\"%s\",\"supportedVersions\":[", v);
    for (size_t i = 0; i < COUNT(VERSIONS); i++) printf("%s\"%s\"", i ? "," : "", VERSIONS[i]);
    puts("]}");
    return 0;
  }
  if (n > MAX_CONF)
    return cni_error(c.version, 7, "the network configuration is larger than 1 MiB", NULL);
  int add = strcmp(cmd, "ADD") == 0, check = strcmp(cmd, "CHECK") == 0;
  if ((add || check) && skip_reason(&c, getenv("CNI_ARGS"))) {
    const char *v, *ve;
    if (!member(c.text, c.end, "prevResult", &v, &ve) || *v != '{')
      return cni_error(c.version, 7, add ? "aether-cni is a chained plugin and got no prevResult on ADD"
                                         : "aether-cni is a chained plugin and got no prevResult on CHECK",
                       "list it after the pod network's own plugins in the conflist");
    if (add) {
      write_all(1, v, (size_t)(ve - v));
      write_all(1, "\n", 1);
    }
    return 0;
  }
  struct reply r = {0};
  char why[256] = "";
  int f = forward(&c, text, n, &r, why, sizeof why);
  if (f == 0) {
    write_all(1, r.out, r.out_len);
    write_all(2, r.err, r.err_len);
    return r.exit_code;
  }
  char msg[512];
  if (f == -2)
    snprintf(msg, sizeof msg, "the aether node agent at %s did not answer within %g s", c.socket,
             c.timeout + MARGIN);
  else
    snprintf(msg, sizeof msg, "the aether node agent is unreachable at %s: %s", c.socket, why);
  if (strcmp(cmd, "DEL") == 0) {
    fprintf(stderr, "aether-cni: DEL not forwarded (%s); nothing to undo here\n", msg);
    return 0;
  }
  if (strcmp(cmd, "STATUS") == 0) return cni_error(c.version, 50, msg, RETRY);
  return cni_error(c.version, 11, msg, RETRY);
}
