"""CORS: the preflight, loopback origins echoed, foreign origins refused unless --allow-origin."""

from rollout_lab_bridge import server

from .helpers import BridgeCase, message_logs

STEP = {"message_log_batch": message_logs("yes"), "metadata": [None]}


class Cors(BridgeCase):
    def setUp(self):
        self.running = self.start("tests.examples.plain_env:EchoGame")

    def test_preflight(self):
        status, headers, body = self.running.call("/step", method="OPTIONS", headers={
            "Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type"})
        self.assertEqual(status, 204)
        self.assertEqual(headers["Access-Control-Allow-Origin"], "http://localhost:5173")
        self.assertEqual(headers["Access-Control-Allow-Methods"], "GET, POST, OPTIONS")
        self.assertEqual(headers["Access-Control-Allow-Headers"], "content-type")
        self.assertTrue(int(headers["Access-Control-Max-Age"]) > 0)
        self.assertIn("Origin", headers["Vary"])

    def test_loopback_origins_echoed(self):
        for origin in ("http://localhost:5173", "http://127.0.0.1:8080", "http://[::1]:3000", "http://localhost"):
            status, headers, body = self.running.call("/step", STEP, headers={"Origin": origin})
            self.assertEqual(status, 200, origin)
            self.assertEqual(headers["Access-Control-Allow-Origin"], origin)
            self.assertEqual(headers["Vary"], "Origin")
            status, headers, _ = self.running.call("/info", headers={"Origin": origin})
            self.assertEqual((status, headers["Access-Control-Allow-Origin"]), (200, origin))

    def test_errors_carry_cors_headers(self):
        status, headers, _ = self.running.call("/nothing", headers={"Origin": "http://localhost:5173"})
        self.assertEqual((status, headers["Access-Control-Allow-Origin"]), (404, "http://localhost:5173"))

    def test_foreign_origin_refused(self):
        for origin in ("https://x.example", "http://localhost.evil.example", "http://127.0.0.1.nip.io:80", "null"):
            status, _, body = self.running.call("/step", STEP, headers={"Origin": origin})
            self.assertEqual(status, 403, origin)
            self.assertEqual(body["error"], f"origin {origin} is not allowed: restart the bridge with "
                                            f"--allow-origin {origin}")
            self.assertEqual(self.running.call("/step", method="OPTIONS", headers={"Origin": origin})[0], 403)
            self.assertEqual(self.running.call("/info", headers={"Origin": origin})[0], 403)

    def test_no_origin_served(self):
        status, headers, _ = self.running.call("/step", STEP)
        self.assertEqual(status, 200)
        self.assertNotIn("Access-Control-Allow-Origin", headers)

    def test_allow_origin(self):
        running = self.start("tests.examples.plain_env:EchoGame", allow_origins=["https://lab.example.org"])
        status, headers, _ = running.call("/step", STEP, headers={"Origin": "https://lab.example.org"})
        self.assertEqual((status, headers["Access-Control-Allow-Origin"]), (200, "https://lab.example.org"))
        self.assertEqual(running.call("/step", STEP, headers={"Origin": "https://other.example.org"})[0], 403)
        anything = self.start("tests.examples.plain_env:EchoGame", allow_origins=["*"])
        status, headers, _ = anything.call("/step", STEP, headers={"Origin": "https://x.example"})
        self.assertEqual((status, headers["Access-Control-Allow-Origin"]), (200, "https://x.example"))

    def test_origin_allowed(self):
        self.assertTrue(server.origin_allowed("http://LOCALHOST:1", ()))
        self.assertFalse(server.origin_allowed("https://localhost:1", ()))
        self.assertTrue(server.origin_allowed("https://a.example", ("https://a.example/",)))
