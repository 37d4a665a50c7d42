import assert from "node:assert/strict";
import { compareHostnames, covers, intersectHostname, routeHostnames } from "./hostnames.ts";

Deno.test("hostnames: wildcard coverage needs at least one more label", () => {
  assert.equal(covers("*.example.com", "foo.example.com"), true);
  assert.equal(covers("*.example.com", "a.foo.example.com"), true);
  assert.equal(covers("*.example.com", "*.foo.example.com"), true);
  assert.equal(covers("*.example.com", "example.com"), false);
  assert.equal(covers("*.example.com", "*.example.com"), true);
  assert.equal(covers("*.foo.example.com", "*.example.com"), false);
  assert.equal(covers("*", "anything.org"), true);
  assert.equal(covers("foo.example.com", "*.example.com"), false);
});

Deno.test("hostnames: listener ∩ route is the more specific name", () => {
  assert.equal(intersectHostname("*.example.com", "foo.example.com"), "foo.example.com");
  assert.equal(intersectHostname("foo.example.com", "*.example.com"), "foo.example.com");
  assert.equal(intersectHostname("*.example.com", "*.foo.example.com"), "*.foo.example.com");
  assert.equal(intersectHostname("*.foo.example.com", "*.example.com"), "*.foo.example.com");
  assert.equal(intersectHostname(undefined, "foo.example.com"), "foo.example.com");
  assert.equal(intersectHostname("foo.example.com", "*"), "foo.example.com");
  assert.equal(intersectHostname("*.example.com", "example.com"), undefined);
  assert.equal(intersectHostname("foo.example.com", "bar.example.com"), undefined);
  assert.deepEqual(
    routeHostnames("*.example.com", ["test.example.com", "test.example.net", "*.example.com"]),
    [
      "test.example.com",
      "*.example.com",
    ],
  );
  assert.deepEqual(routeHostnames("foo.com", undefined), ["foo.com"]);
  assert.deepEqual(routeHostnames(undefined, []), ["*"]);
});

Deno.test("hostnames: exact first, then longer wildcards, then *", () => {
  assert.deepEqual(
    ["*", "*.example.com", "b.com", "*.foo.example.com", "aa.com"].sort(compareHostnames),
    [
      "aa.com",
      "b.com",
      "*.foo.example.com",
      "*.example.com",
      "*",
    ],
  );
});
