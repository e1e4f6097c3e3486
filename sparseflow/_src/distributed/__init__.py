"""The distributed runtime: servers, master and worker services over gRPC, cluster specs.

Importing it lets ``tf.Session("grpc://host:port")`` open cluster sessions.
"""

from sparseflow._src.distributed.client_master import open_session_master
from sparseflow._src.runtime.session import register_session_target

register_session_target("grpc://", open_session_master)
