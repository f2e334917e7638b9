#!/usr/bin/python3
"""claim2cored's node labels on a host without Kubernetes (issue #14 item 1): node.labels in the
config select a NodeSchedulingPolicy (matchExpressions and the seeds' map form), the hostname label
is always there, SetNodeLabels (what the observer sends from the Node object) replaces the config's
labels and re-derives, bad labels and bad selectors are refused naming the field with the state
unchanged, and a SIGHUP reload applies new config labels.

Same harness and arguments as daemon_test.py (its Daemon class is reused):
  daemon_node_labels_test.py <claim2cored> <proto> <thread-churn helper> <work dir> [unittest names...]
"""
import signal
import sys
import time
import unittest

import grpc

import daemon_test as dt  # parses the four arguments and generates the proto modules
from daemon_test import Daemon, Threads, pb, skip_reason, wait_for

dt.RESPONSES["SetNodeLabels"] = pb.SetNodeLabelsResponse

CONFIG_LABELS = "node:\n  labels:\n    claim2core.io/pool: inference\n    zone: a\n"


def by_label(name, comm, expressions=(), match=None):
    exprs = [pb.LabelSelectorRequirement(key=k, operator=op, values=list(v)) for k, op, v in expressions]
    return pb.Policy(node=pb.NodeSchedulingPolicy(name=name, node_selectors=match or {},
                                                  node_selector_expressions=exprs,
                                                  command_regex="^%s$" % comm, priority=1,
                                                  execution_time_ns=2_000_000))


def settled_digest(d, timeout=10.0):
    """The state digest once the daemon has stopped changing it on its own (two equal reads)."""
    last = d.status().state_digest
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.3)
        now = d.status().state_digest
        if now == last:
            return now
        last = now
    raise AssertionError("the state digest did not settle within %.0f s" % timeout)


class NodeLabels(unittest.TestCase):
    def setUp(self):
        reason = skip_reason()
        if reason:
            self.skipTest(reason)
        self.d = Daemon("labels", extra=CONFIG_LABELS).start()
        self.t = Threads("c2c-it-label", 1)

    def tearDown(self):
        if hasattr(self, "t") and self.t.proc.poll() is None:
            self.t.end()
        if hasattr(self, "d"):
            sys.stderr.write("--- daemon log (tail) ---\n" + "\n".join(self.d.read_log().splitlines()[-15:]) + "\n")
            self.d.cleanup()

    def has_entry(self):
        return self.t.tids[0] in self.d.map_entries()

    def assertInvalid(self, method, req, field):
        with self.assertRaises(grpc.RpcError) as cm:
            self.d.call(method, req)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, cm.exception.details())
        self.assertTrue(cm.exception.details().startswith(field + ":"), cm.exception.details())

    def test_a_config_label_selects_and_the_node_object_replaces_it(self):
        d = self.d
        pol = by_label("by-pool", "c2c-it-label", [("claim2core.io/pool", "In", ["inference"]),
                                                    ("node-role.kubernetes.io/control-plane", "DoesNotExist", [])],
                       match={"kubernetes.io/hostname": "c2c-test-node"})
        d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=pol))
        self.assertTrue(wait_for(self.has_entry), "the config's node.labels select the policy: entry in the map")
        # The seeds' map form means matchLabels.
        pv = d.call("Preview", pb.PreviewRequest(policy=by_label("by-zone", "c2c-it-label", match={"zone": "b"})))
        self.assertIn("NodeSchedulingPolicy/by-zone: node not selected: nodeSelectors: wants zone=b, but the node has "
                      "zone=a", list(pv.warnings))

        # The Node object's labels (the observer) replace the config's as a whole; the hostname stays.
        r = d.call("SetNodeLabels", pb.SetNodeLabelsRequest(labels={"claim2core.io/pool": "batch"}))
        self.assertFalse(r.ignored)
        self.assertEqual(dict(r.effective_labels),
                         {"claim2core.io/pool": "batch", "kubernetes.io/hostname": "c2c-test-node"})
        self.assertTrue(wait_for(lambda: not self.has_entry()), "a label change re-derives: the entry leaves")
        pv = d.call("Preview", pb.PreviewRequest(policy=pol))
        self.assertIn("NodeSchedulingPolicy/by-pool: node not selected: nodeSelectors.matchExpressions[0]: "
                      "claim2core.io/pool In [inference], but the node has claim2core.io/pool=batch", list(pv.warnings))
        self.assertTrue(d.call("SetNodeLabels", pb.SetNodeLabelsRequest(labels={"claim2core.io/pool": "batch"})).ignored)

        # Refused labels and selectors name the field and change nothing. The label change above may
        # still be settling (the short read-back confirming the entry's removal moves the core's
        # time, which the digest includes): the digest is taken once two reads 0.3 s apart agree.
        before = settled_digest(d)
        self.assertInvalid("SetNodeLabels", pb.SetNodeLabelsRequest(labels={"claim2core.io/pool": "not a value"}),
                           "labels[claim2core.io/pool]")
        self.assertInvalid("UpsertPolicy", pb.UpsertPolicyRequest(
            policy=by_label("bad", "x", [("zone", "Exists", []), ("gpu", "In", [])])),
            "policy.node.node_selector_expressions[1].values")
        self.assertInvalid("UpsertPolicy", pb.UpsertPolicyRequest(policy=by_label("bad", "x", [("gpu", "Near", ["a"])])),
                           "policy.node.node_selector_expressions[0].operator")
        self.assertEqual(d.status().state_digest, before)

        d.call("SetNodeLabels", pb.SetNodeLabelsRequest(labels={"claim2core.io/pool": "inference"}))
        self.assertTrue(wait_for(self.has_entry), "the label back: the entry is back")

    def test_the_node_objects_labels_survive_a_restart(self):
        # INV-7: a policy selected only by the Node object's labels keeps its entry across a
        # restart; the daemon does not fall back to the config's labels until the feed resends.
        d = self.d
        pol = by_label("by-pool", "c2c-it-label", [("claim2core.io/pool", "In", ["batch"])])
        d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=pol))
        d.call("SetNodeLabels", pb.SetNodeLabelsRequest(labels={"claim2core.io/pool": "batch"}))
        self.assertTrue(wait_for(self.has_entry), "the Node object's label selects the policy")
        d.stop()
        d.start()
        pv = d.call("Preview", pb.PreviewRequest(policy=pol))
        self.assertFalse([w for w in pv.warnings if "node not selected" in w],
                         "after the restart the Node object's labels still select it: %s" % list(pv.warnings))
        time.sleep(1.5)  # past a read-back pass (readback_interval 1s): nothing pruned it
        self.assertTrue(self.has_entry(), "the entry stayed across the restart")

    def test_the_node_objects_labels_survive_kill_9(self):
        # They are logged with SetNodeLabels' batch (before, the record was dropped unless another
        # durable change shared the batch: only a clean stop's snapshot kept them).
        d = self.d
        pol = by_label("by-pool", "c2c-it-label", [("claim2core.io/pool", "In", ["batch"])])
        d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=pol))
        d.call("SetNodeLabels", pb.SetNodeLabelsRequest(labels={"claim2core.io/pool": "batch"}))
        self.assertTrue(wait_for(self.has_entry))
        d.kill9()
        d.start()
        pv = d.call("Preview", pb.PreviewRequest(policy=pol))
        self.assertFalse([w for w in pv.warnings if "node not selected" in w],
                         "after kill -9 the Node object's labels still select it: %s" % list(pv.warnings))

    def test_a_label_change_brings_the_intent_in_the_same_turn(self):
        # A long read-back interval: only the short read-back after the write confirms in time.
        # Before, the intent of a node policy that SetNodeLabels made apply appeared only at the
        # next full read-back (none after 30 s), while its entries were written at once.
        self.d.cleanup()
        self.d = d = Daemon("labels60", extra=CONFIG_LABELS, readback="60s").start()
        pol = by_label("by-zone", "c2c-it-label", match={"zone": "b"})
        d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=pol))
        intents = lambda: list(d.call("ListIntents", pb.ListIntentsRequest(policy="by-zone")).intents)
        self.assertEqual(intents(), [], "zone=a: the policy does not select this node")
        d.call("SetNodeLabels", pb.SetNodeLabelsRequest(labels={"zone": "b"}))
        now = intents()
        self.assertEqual([(i.policy, i.state) for i in now], [("by-zone", pb.SENT)],
                         "the intent comes with the reply, its entry written: %s" % now)
        self.assertTrue(self.has_entry())
        self.assertTrue(wait_for(lambda: [i for i in intents() if i.state == pb.APPLIED], timeout=5),
                        "Applied by the short read-back: %s" % intents())
        d.call("SetNodeLabels", pb.SetNodeLabelsRequest(labels={"zone": "a"}))
        self.assertEqual(intents(), [], "and it leaves with the label")

    def test_a_refused_label_is_echoed_short(self):
        # A 10 KB key echoed in full made the status exceed the client's metadata limit: the
        # client saw RESOURCE_EXHAUSTED instead of the reason. No task discovery: the host's other
        # processes must not change the digest between the calls.
        self.d.cleanup()
        self.d = d = Daemon("labelsecho", task_discovery="off", extra=CONFIG_LABELS).start()
        before = d.status().state_digest
        for labels in ({"k" * 10_000: "v"}, {"zone": "v" * 10_000}):
            with self.assertRaises(grpc.RpcError) as cm:
                d.call("SetNodeLabels", pb.SetNodeLabelsRequest(labels=labels))
            details = cm.exception.details()
            self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, details[:300])
            self.assertTrue(details.startswith("labels"), details)
            self.assertIn("... (10000 bytes)", details)
            self.assertLess(len(details), 400, details)
        self.assertEqual(d.status().state_digest, before)

    def test_a_reload_applies_new_config_labels(self):
        d = self.d
        d.call("UpsertPolicy", pb.UpsertPolicyRequest(
            policy=by_label("by-pool", "c2c-it-label", [("claim2core.io/pool", "NotIn", ["batch"])])))
        self.assertTrue(wait_for(self.has_entry))
        d.write_config(extra="node:\n  labels:\n    claim2core.io/pool: batch\n")
        d.proc.send_signal(signal.SIGHUP)
        self.assertTrue(wait_for(lambda: not self.has_entry()), "SIGHUP: the new node.labels re-derive")


if __name__ == "__main__":
    unittest.main()
