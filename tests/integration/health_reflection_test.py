"""gRPC health through reflection (issue 17): a client that knows no claim2core or health proto
asks claim2cored's reflection service for its services, finds grpc.health.v1.Health, fetches the
file that declares it, builds the request and response types from those descriptors and calls
Check, which must answer SERVING. The only proto this client compiles is reflection's own.

  health_reflection_test.py <claim2cored> <work dir>
"""
import os
import subprocess
import sys
import tempfile

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

HERE = os.path.dirname(os.path.abspath(__file__))
DAEMON, WORK = sys.argv[1:3]
os.makedirs(WORK, exist_ok=True)
subprocess.run(["protoc", "--proto_path=" + os.path.join(HERE, "reflection"), "--python_out=" + WORK,
                "server_reflection.proto"], check=True)
sys.path.insert(0, WORK)
sys.path.insert(0, HERE)
import server_reflection_pb2 as rpb  # noqa: E402
from c2c_it import require_bpf, stop_processes  # noqa: E402

HEALTH = "grpc.health.v1.Health"


class Reflection:
    """One reflection stream per request (the server answers each request on its stream)."""

    def __init__(self, channel):
        self.call = channel.stream_stream(
            "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
            request_serializer=rpb.ServerReflectionRequest.SerializeToString,
            response_deserializer=rpb.ServerReflectionResponse.FromString)

    def ask(self, **field):
        (resp,) = list(self.call(iter([rpb.ServerReflectionRequest(**field)]), timeout=10))
        return resp

    def services(self):
        resp = self.ask(list_services="")
        if resp.WhichOneof("message_response") != "list_services_response":
            raise AssertionError(f"list_services answered {resp}")
        return [s.name for s in resp.list_services_response.service]

    def file_of(self, symbol):
        """The FileDescriptorProtos declaring symbol (and its imports), or the server's error."""
        resp = self.ask(file_containing_symbol=symbol)
        kind = resp.WhichOneof("message_response")
        if kind == "error_response":
            return None, f"{resp.error_response.error_code}: {resp.error_response.error_message}"
        files = []
        for raw in resp.file_descriptor_response.file_descriptor_proto:
            f = descriptor_pb2.FileDescriptorProto()
            f.ParseFromString(raw)
            files.append(f)
        return files, None


def check_through_reflection(channel):
    refl = Reflection(channel)
    services = refl.services()
    print("services:", ", ".join(sorted(services)))
    if HEALTH not in services:
        raise AssertionError(f"reflection does not list {HEALTH}: {services}")
    if "claim2core.v1.Claim2Core" not in services:
        raise AssertionError(f"reflection does not list claim2core.v1.Claim2Core: {services}")
    # The client must tell a missing symbol from a found one (else a pass below means nothing).
    missing, err = refl.file_of("grpc.health.v1.NoSuchService")
    if missing is not None or not err:
        raise AssertionError("reflection found a symbol that does not exist")
    files, err = refl.file_of(HEALTH)
    if files is None:
        raise AssertionError(f"reflection cannot describe {HEALTH} ({err}): a reflection client cannot call it")
    pool = descriptor_pool.DescriptorPool()
    for f in files:
        pool.Add(f)
    method = pool.FindServiceByName(HEALTH).FindMethodByName("Check")
    request_cls = message_factory.GetMessageClass(method.input_type) if hasattr(
        message_factory, "GetMessageClass") else message_factory.MessageFactory(pool).GetPrototype(method.input_type)
    response_cls = message_factory.GetMessageClass(method.output_type) if hasattr(
        message_factory, "GetMessageClass") else message_factory.MessageFactory(pool).GetPrototype(method.output_type)
    check = channel.unary_unary(f"/{HEALTH}/Check", request_serializer=lambda m: m.SerializeToString(),
                                response_deserializer=response_cls.FromString)
    resp = check(request_cls(service=""), timeout=10)
    status_enum = method.output_type.fields_by_name["status"].enum_type
    status = status_enum.values_by_number[resp.status].name
    print(f"{HEALTH}/Check (types from reflection): {status}")
    if status != "SERVING":
        raise AssertionError(f"Check answered {status}")


def main():
    require_bpf("bpffs, BPF maps")
    root = tempfile.mkdtemp(prefix="c2c-health-", dir=WORK)
    pin = f"/sys/fs/bpf/c2c-health-{os.getpid()}"
    sock = os.path.join(root, "run", "d.sock")
    log = open(os.path.join(root, "daemon.log"), "w")
    proc = subprocess.Popen([DAEMON, "--config", "/dev/null", "--socket", sock, "--state-dir",
                             os.path.join(root, "state"), "--pin-root", pin, "--task-discovery", "scan"],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        channel = grpc.insecure_channel("unix://" + sock)
        grpc.channel_ready_future(channel).result(timeout=30)
        check_through_reflection(channel)
    except Exception:
        log.flush()
        print(open(os.path.join(root, "daemon.log")).read())
        raise
    finally:
        stop_processes([proc], root, pin)
    print("ok: health is listed, described and called through reflection")


if __name__ == "__main__":
    main()
