"""gRPC plumbing: services served and called through their proto descriptors, errors as status codes.

- ``add_service(server, service_descriptor, servicer)`` serves every RPC of a service by calling
  ``servicer.<RpcName>(request)`` (a generator of the responses for a server-streaming RPC); a
  method that raises an ``OpError`` answers with its canonical code and message (TensorFlow's codes
  are gRPC's). Requests are parsed by protobuf only: nothing received is unpickled or executed.
- ``Client(address, service_descriptor, ...)`` calls them: ``client.call("RunGraph", request,
  timeout)``, ``client.future(...)`` and, for a server-streaming RPC, ``client.stream(...)`` (an
  iterable of the responses, with ``cancel()``); gRPC failures become ``OpError``s naming the task
  (``UnavailableError`` when it cannot be reached).
- Every call has a deadline. An optional shared token travels as call metadata and is checked by
  the server before any servicer runs; TLS uses gRPC's credentials (``Security``).
- Message size: gRPC's limits are lifted (``-1``), and tensors travel as raw bytes.

Example:
    >>> from sparseflow._src.framework import errors
    >>> status_code_of(errors.AbortedError(None, None, "x")) == grpc.StatusCode.ABORTED
    True
"""

from __future__ import annotations

import dataclasses
import hmac
import os
import threading
from concurrent.futures import Future

import grpc
import grpc.experimental

from sparseflow._src.framework import errors

TOKEN_METADATA = "sparseflow-token"
DEFAULT_RPC_TIMEOUT = 60.0  # seconds, for calls whose deadline is not set by the step

_OPTIONS = [
    ("grpc.max_send_message_length", -1),
    ("grpc.max_receive_message_length", -1),
    ("grpc.keepalive_time_ms", 10_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
    # A task that restarts is reached again within about a second (gRPC's default backoff grows to 2 min).
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1_000),
]
_SERVER_OPTIONS = _OPTIONS + [("grpc.so_reuseport", 0)]
# A server-streaming call's responses are read by the thread that iterates it (each stream has its own
# reader thread here), from the call's own completion queue. Without this option gRPC starts a
# "channel spin thread" whenever a channel's first such call begins (every step) and hands each
# message from that thread to the reader: one more thread wake-up per message.
_CHANNEL_OPTIONS = _OPTIONS + [(grpc.experimental.ChannelOptions.SingleThreadedUnaryStream, 1)]

_CODES = {c.value[0]: c for c in grpc.StatusCode}


def status_code_of(exc: BaseException) -> grpc.StatusCode:
    code = errors.error_code_from_exception_type(type(exc)) if isinstance(exc, errors.OpError) else errors.UNKNOWN
    return _CODES.get(code, grpc.StatusCode.UNKNOWN)


def error_from_status(code: grpc.StatusCode, message: str) -> errors.OpError:
    cls = errors.exception_type_from_error_code(code.value[0])
    return cls(None, None, message)


@dataclasses.dataclass(frozen=True)
class Security:
    """Who may call a server: a shared token, and TLS (PEM bytes) when given.

    ``token``: clients send it, servers refuse calls without it. ``cert``/``key``: the server's
    certificate and private key; ``ca``: the certificate clients trust (the server's or its CA's).
    ``from_env()`` reads ``SPARSEFLOW_TOKEN`` and ``SPARSEFLOW_TLS_{CERT,KEY,CA}`` (file paths).
    """

    token: str | None = None
    cert: bytes | None = None
    key: bytes | None = None
    ca: bytes | None = None

    @staticmethod
    def from_env(environ=None) -> Security:
        env = os.environ if environ is None else environ

        def read(var):
            path = env.get(var)
            if not path:
                return None
            with open(path, "rb") as f:
                return f.read()

        return Security(env.get("SPARSEFLOW_TOKEN") or None, read("SPARSEFLOW_TLS_CERT"), read("SPARSEFLOW_TLS_KEY"),
                        read("SPARSEFLOW_TLS_CA"))

    @property
    def tls(self) -> bool:
        return self.cert is not None or self.ca is not None


class _TokenCheck(grpc.ServerInterceptor):
    def __init__(self, token: str):
        self._token = token.encode()

        def deny(request, context):
            context.abort(grpc.StatusCode.UNAUTHENTICATED,
                          "This server requires a token (set SPARSEFLOW_TOKEN, or Server(..., token=)); the call "
                          "had none or a wrong one.")

        self._deny = grpc.unary_unary_rpc_method_handler(deny)

    def intercept_service(self, continuation, handler_call_details):
        for k, v in handler_call_details.invocation_metadata or ():
            if k == TOKEN_METADATA and hmac.compare_digest(v.encode() if isinstance(v, str) else v, self._token):
                return continuation(handler_call_details)
        return self._deny


def make_server(max_workers: int, security: Security):
    """A gRPC server with sparseflow's options and the token check."""
    from concurrent import futures

    interceptors = [_TokenCheck(security.token)] if security.token else []
    return grpc.server(futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="sparseflow-rpc"),
                       options=_SERVER_OPTIONS, interceptors=interceptors)


def bind(server, address: str, security: Security) -> int:
    """Binds exactly ``address`` ("host:port"); returns the port (0 when it could not bind)."""
    try:
        if security.cert is not None:
            creds = grpc.ssl_server_credentials([(security.key, security.cert)])
            return server.add_secure_port(address, creds)
        return server.add_insecure_port(address)
    except RuntimeError:  # grpcio >= 1.56 raises "Failed to bind to address ..." where older ones returned 0
        return 0


def add_service(server, service, servicer) -> None:
    """Serves every method of ``service`` (a ServiceDescriptor) by ``servicer.<Method>(request)``."""
    from google.protobuf import message_factory

    handlers = {}
    for method in service.methods:
        req_cls = message_factory.GetMessageClass(method.input_type)
        fn = getattr(servicer, method.name)
        if method.server_streaming:  # the servicer method is a generator of the responses
            handlers[method.name] = grpc.unary_stream_rpc_method_handler(
                _wrap_stream(fn, method.name), request_deserializer=req_cls.FromString,
                response_serializer=lambda m: m.SerializeToString())
            continue
        handlers[method.name] = grpc.unary_unary_rpc_method_handler(
            _wrap(fn, method.name), request_deserializer=req_cls.FromString,
            response_serializer=lambda m: m.SerializeToString())
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service.full_name, handlers),))


def _wrap(fn, name):
    def handle(request, context):
        try:
            return fn(request, context)
        except errors.OpError as e:
            context.abort(status_code_of(e), e.message)
        except (ValueError, TypeError, KeyError) as e:  # a malformed request
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"{name}: {type(e).__name__}: {e}")

    return handle


def _wrap_stream(fn, name):
    def handle(request, context):
        try:
            yield from fn(request, context)
        except errors.OpError as e:
            context.abort(status_code_of(e), e.message)
        except (ValueError, TypeError, KeyError) as e:  # a malformed request
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"{name}: {type(e).__name__}: {e}")

    return handle


class Client:
    """Calls the methods of one service at one address (see the module docstring)."""

    def __init__(self, address: str, service, security: Security, peer_name: str | None = None):
        from google.protobuf import message_factory

        self.address = address
        self.peer = peer_name or address
        if security.tls:
            creds = grpc.ssl_channel_credentials(root_certificates=security.ca)
            self._channel = grpc.secure_channel(address, creds, options=_CHANNEL_OPTIONS)
        else:
            self._channel = grpc.insecure_channel(address, options=_CHANNEL_OPTIONS)
        self._metadata = ((TOKEN_METADATA, security.token),) if security.token else None
        self._stubs = {}
        for method in service.methods:
            resp_cls = message_factory.GetMessageClass(method.output_type)
            kind = self._channel.unary_stream if method.server_streaming else self._channel.unary_unary
            self._stubs[method.name] = kind(
                f"/{service.full_name}/{method.name}", request_serializer=lambda m: m.SerializeToString(),
                response_deserializer=resp_cls.FromString)
        self._lock = threading.Lock()

    def call(self, method: str, request, timeout: float | None = DEFAULT_RPC_TIMEOUT, wait_for_ready=False):
        try:
            return self._stubs[method](request, timeout=timeout, metadata=self._metadata,
                                       wait_for_ready=wait_for_ready)
        except grpc.RpcError as e:
            raise self._error(method, e) from None

    def future(self, method: str, request, timeout: float | None = DEFAULT_RPC_TIMEOUT) -> Future:
        """A concurrent.futures.Future of the response (errors already translated)."""
        out: Future = Future()
        call = self._stubs[method].future(request, timeout=timeout, metadata=self._metadata)

        def done(c):
            if c.cancelled():
                out.set_exception(errors.CancelledError(None, None, f"{method} to {self.peer} was cancelled."))
                return
            exc = c.exception()
            if exc is None:
                out.set_result(c.result())
            else:
                out.set_exception(self._error(method, exc))

        call.add_done_callback(done)
        out.rpc = call
        return out

    def stream(self, method: str, request, timeout: float | None = DEFAULT_RPC_TIMEOUT) -> Stream:
        """A server-streaming call: iterate it for the responses (errors translated); ``cancel()``."""
        return Stream(self, method, self._stubs[method](request, timeout=timeout, metadata=self._metadata))

    def _error(self, method: str, e: grpc.RpcError) -> errors.OpError:
        code = e.code() if hasattr(e, "code") else grpc.StatusCode.UNKNOWN
        details = (e.details() if hasattr(e, "details") else str(e)) or ""
        if code == grpc.StatusCode.UNAVAILABLE:
            return errors.UnavailableError(None, None, f"{self.peer} is unreachable ({method}): {details}. Check that "
                                                       f"the task is running and its address is right.")
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            return errors.DeadlineExceededError(None, None, f"{method} to {self.peer}: deadline exceeded. {details}")
        if code == grpc.StatusCode.UNAUTHENTICATED:
            return errors.UnauthenticatedError(None, None, f"{self.peer} refused the call ({method}): {details}")
        return error_from_status(code, details)

    def close(self):
        self._channel.close()


class Stream:
    """The responses of a server-streaming call (``Client.stream``); gRPC failures become
    ``OpError``s naming the task, as in ``Client.call``."""

    def __init__(self, client: Client, method: str, call):
        self._client, self._method, self._call = client, method, call

    def __iter__(self):
        try:
            yield from self._call
        except grpc.RpcError as e:
            if e.code() == grpc.StatusCode.CANCELLED:
                raise errors.CancelledError(None, None, f"{self._method} to {self._client.peer} was "
                                                        f"cancelled.") from None
            raise self._client._error(self._method, e) from None

    def cancel(self):
        self._call.cancel()
