"""TF1 programs placing a model with ``tf.train.replica_device_setter``, for any TF1-style module.

``tests/record_tf_reference.py`` runs them with TensorFlow and writes the devices to
``device_setter_expected.py``. TensorFlow 2.21 no longer ships ``tf.contrib.training``: for the
greedy and random strategies the recorder passes :class:`ContribGreedy` / :class:`ContribRandom`
below (TF1 contrib's documented rules) as ``ps_strategy`` to TensorFlow's own
``replica_device_setter``; sparseflow runs its ``tf.train.GreedyLoadBalancingStrategy`` /
``RandomStrategy`` instead.
"""

import hashlib

import numpy as np


class ContribGreedy:
    """tf.contrib.training.GreedyLoadBalancingStrategy: the least loaded task (lowest on ties)."""

    def __init__(self, num_tasks, load_fn):
        self.loads = np.zeros(num_tasks)
        self.load_fn = load_fn

    def __call__(self, op):
        task = int(np.argmin(self.loads))
        self.loads[task] += self.load_fn(op)
        return task


class ContribRandom:
    """tf.contrib.training.RandomStrategy: MD5 of "<op name>_<seed>" modulo the number of tasks."""

    def __init__(self, num_tasks, seed=0):
        self.num_tasks, self.seed = num_tasks, seed

    def __call__(self, op):
        return int(hashlib.md5(f"{op.name}_{self.seed}".encode()).hexdigest(), 16) % self.num_tasks


def contrib_byte_size_load_fn(tf):
    def load(op):
        out = op.outputs[0]
        shape = out.get_shape()
        if not shape.is_fully_defined():
            shape = tf.TensorShape(op.get_attr("shape"))
        return shape.num_elements() * out.dtype.size
    return load


def _strategy(tf, kind, sparseflow):
    if kind == "greedy2":
        if sparseflow:
            return tf.train.GreedyLoadBalancingStrategy(2, tf.train.byte_size_load_fn)
        return ContribGreedy(2, contrib_byte_size_load_fn(tf))
    if kind == "random3":
        return tf.train.RandomStrategy(3, seed=7) if sparseflow else ContribRandom(3, seed=7)
    return None


def _setter(tf, case, sparseflow):
    rds = tf.train.replica_device_setter
    if case == "round_robin_3_adam":
        return rds(ps_tasks=3, worker_device="/job:worker/task:1"), "adam"
    if case == "cluster_dict_2_adagrad":
        return rds(cluster={"ps": ["ps0:2222", "ps1:2222"], "worker": ["w0:2222"]}), "adagrad"
    if case == "cluster_spec_3_momentum":
        spec = tf.train.ClusterSpec({"ps": ["a:1", "b:1", "c:1"], "worker": ["d:1", "e:1"]})
        return rds(cluster=spec, ps_device="/job:ps/cpu:0", worker_device="/job:worker/task:1/cpu:0"), "momentum"
    if case == "greedy_2_adam":
        return rds(ps_tasks=2, ps_strategy=_strategy(tf, "greedy2", sparseflow)), "adam"
    if case == "random_3_ftrl":
        return rds(ps_tasks=3, ps_strategy=_strategy(tf, "random3", sparseflow)), "ftrl"
    if case == "no_merge_sgd":
        return rds(ps_tasks=2, merge_devices=False), "sgd"
    if case == "custom_ps_ops_sgd":
        return rds(ps_tasks=2, ps_ops=["VariableV2", "Const"], worker_device="/job:trainer/task:0"), "sgd"
    if case == "ps_device_with_task_adagrad":
        return rds(ps_tasks=2, ps_device="/job:param/task:9", worker_device=""), "adagrad"
    raise ValueError(case)


CASES = ["round_robin_3_adam", "cluster_dict_2_adagrad", "cluster_spec_3_momentum", "greedy_2_adam",
         "random_3_ftrl", "no_merge_sgd", "custom_ps_ops_sgd", "ps_device_with_task_adagrad"]


def _optimizer(tf, name):
    return {"adam": lambda: tf.train.AdamOptimizer(0.1), "adagrad": lambda: tf.train.AdagradOptimizer(0.1),
            "momentum": lambda: tf.train.MomentumOptimizer(0.1, 0.9),
            "ftrl": lambda: tf.train.FtrlOptimizer(0.1), "sgd": lambda: tf.train.GradientDescentOptimizer(0.1)}[name]()


def build_model(tf, setter, optimizer):
    """A small Wide&Deep-like model: a partitioned embedding, two dense layers, inner device scopes."""
    g = tf.Graph()
    with g.as_default():
        with tf.device(setter):
            global_step = tf.train.get_or_create_global_step()
            x = tf.placeholder(tf.float32, [None, 4], name="x")
            y = tf.placeholder(tf.float32, [None, 1], name="y")
            ids = tf.placeholder(tf.int64, [None], name="ids")
            emb = tf.get_variable("emb", [10, 3], partitioner=tf.fixed_size_partitioner(3))
            e = tf.nn.embedding_lookup(emb, ids)
            with tf.variable_scope("dense"):
                w1 = tf.get_variable("w1", [7, 5])
                b1 = tf.get_variable("b1", [5], initializer=tf.zeros_initializer())
                h = tf.nn.relu(tf.matmul(tf.concat([x, e], 1), w1) + b1)
                w2 = tf.get_variable("w2", [5, 1])
                with tf.device("/cpu:0"):
                    b2 = tf.get_variable("b2", [1], initializer=tf.zeros_initializer())
                logits = tf.matmul(h, w2) + b2
            with tf.device("/job:worker/task:3"):
                tf.Variable(1.0, name="side")
            loss = tf.reduce_mean(tf.square(logits - y))
            train = _optimizer(tf, optimizer).minimize(loss, global_step=global_step)
    return g, train


FULL_CASES = ("round_robin_3_adam", "cluster_spec_3_momentum", "greedy_2_adam")
_KEY_TYPES = ("VariableV2", "MatMul", "GatherV2", "Placeholder", "DynamicPartition")


def _recorded(op, full: bool) -> bool:
    """The ops whose devices are compared. Full cases: all but constants and the internals of
    gradients and of sparse updates, plus the gradient ops TF pins (shapes read beside a variable,
    tuple gates). Other cases: variables, optimizer updates and a few compute ops."""
    updates = op.type.startswith(("Apply", "Scatter", "Assign", "SparseApply"))
    if not full:
        return not op.name.startswith("gradients/") and (op.type in _KEY_TYPES or updates)
    if op.name.startswith("gradients/"):
        return (op.type == "Shape" and "_grad/" in op.name) or "/tuple/" in op.name
    if "/update_" in op.name and op.name.count("/") > 2:
        return updates
    return op.type != "Const"


def placements(tf, sparseflow=False):
    """``{case: {device: [op names]}}`` for the recorded ops of each case."""
    out = {}
    for case in CASES:
        setter, optimizer = _setter(tf, case, sparseflow)
        g, _ = build_model(tf, setter, optimizer)
        by_device = {}
        for op in g.get_operations():
            if _recorded(op, case in FULL_CASES):
                by_device.setdefault(op.device, []).append(op.name)
        out[case] = {dev: sorted(names) for dev, names in by_device.items()}
    return out


def setter_edge_cases(tf):
    """Where replica_device_setter gives no function, and inner job scopes that skip the strategy."""
    rds = tf.train.replica_device_setter
    out = {
        "ps_tasks_0": rds() is None,
        "cluster_without_ps": rds(cluster={"worker": ["w:1"]}) is None,
        "cluster_other_ps_job": rds(cluster={"ps": ["p:1"]}, ps_device="/job:param") is None,
    }
    with tf.Graph().as_default():
        with tf.device(rds(ps_tasks=3)):
            a = tf.Variable(1.0, name="a")
            with tf.device("/job:worker/task:2"):
                b = tf.Variable(1.0, name="b")  # another job: the round robin is not advanced
            with tf.device("/job:ps"):
                c = tf.Variable(1.0, name="c")  # the ps job itself: it is
            with tf.device("/job:ps/task:7"):
                d = tf.Variable(1.0, name="d")  # the scope's task is kept (the round robin advances)
            e = tf.Variable(1.0, name="e")
            with tf.device(None):
                f = tf.Variable(1.0, name="f")
            with tf.device(lambda op: "/job:inner/task:5" if op.type == "Const" else ""):
                k = tf.constant(1.0, name="k")
                m = tf.Variable(1.0, name="m")
            with tf.colocate_with(a):
                n = tf.Variable(1.0, name="n")
        out["devices"] = {v.op.name: v.device for v in (a, b, c, d, e, f, m, n)}
        out["devices"]["k"] = k.device
    return out
