"""TF1 queue-runner input pipelines feeding training: slice_input_producer (seeded shuffle, epochs)
+ batch (allow_smaller_final_batch) with a Coordinator; dynamic padding of variable-length
sequences; shuffle_batch (order-independent totals); a MonitoredTrainingSession that starts the
queue runners itself and stops at a step while they are blocked on full queues."""
# ruff: noqa: I001 - the marked TF import and disable_v2_behavior() stay together for the runner
import numpy as np

# TF_IMPORT
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()


class Reporter:
    limit = 32

    def __call__(self, name, value):
        a = np.asarray(value)
        if a.size > self.limit:
            self.line(name + ".shape", " ".join(str(d) for d in a.shape))
            self.line(name + ".sum", f"{a.sum(dtype=np.float64):.6g}")
            self.line(name + ".abssum", f"{np.abs(a).sum(dtype=np.float64):.6g}")
        else:
            self.line(name, " ".join(self.token(t) for t in a.ravel().tolist()))

    @staticmethod
    def token(t):
        if isinstance(t, bool):
            return str(t)
        if isinstance(t, int):
            return f"{t:d}"
        if isinstance(t, float):
            return f"{t:.6g}"
        if isinstance(t, bytes):
            return t.decode()
        return str(t)

    @staticmethod
    def line(name, text):
        print(f"RESULT {name} {text}")


RESULT = Reporter()

rng = np.random.RandomState(42)
N = 50
X = rng.randn(N, 3).astype(np.float32)
TRUE_W = np.array([[2.0], [-1.0], [0.5]], dtype=np.float32)
Y = (X.dot(TRUE_W) + 0.7 + 0.05 * rng.randn(N, 1)).astype(np.float32)


def linear_model(x, y, lr):
    w = tf.Variable(tf.zeros([3, 1]), name="w")
    b = tf.Variable(tf.zeros([1]), name="b")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(lr).minimize(loss, global_step=step)
    return w, b, loss, train, step


# 1. slice_input_producer + batch, plain Session, Coordinator, until the epochs run out.
with tf.Graph().as_default():
    x, y = tf.train.slice_input_producer([X, Y], num_epochs=3, shuffle=True, seed=11)
    xb, yb = tf.train.batch([x, y], batch_size=8, capacity=20, allow_smaller_final_batch=True)
    RESULT("p1_batch_shape", str(xb.shape))
    RESULT("p1_runners", len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)))
    w, b, loss, train, step = linear_model(xb, yb, 0.05)
    batch_size = tf.shape(xb)[0]
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        sizes = []
        try:
            while not coord.should_stop():
                _, n = sess.run([train, batch_size])
                sizes.append(int(n))
        except tf.errors.OutOfRangeError:
            RESULT("p1_out_of_range", True)
        finally:
            coord.request_stop()
        coord.join(threads)
        RESULT("p1_steps", len(sizes))
        RESULT("p1_examples", sum(sizes))
        RESULT("p1_last_batch", sizes[-1])
        RESULT("p1_w", sess.run(w))
        RESULT("p1_b", sess.run(b))
        RESULT("p1_global_step", sess.run(step))
        RESULT("p1_loss_all", sess.run(loss, {xb: X, yb: Y}))

# 2. Variable-length sequences padded by batch(dynamic_pad=True).
with tf.Graph().as_default():
    lines = ["1 2 3", "4", "5 6", "7 8 9 10", "11"]
    line = tf.train.string_input_producer(lines, num_epochs=1, shuffle=False).dequeue()
    seq = tf.string_to_number(tf.string_split([line]).values, out_type=tf.int32)
    length = tf.shape(seq)[0]
    seqs, lengths = tf.train.batch([seq, length], batch_size=2, dynamic_pad=True, allow_smaller_final_batch=True)
    RESULT("p2_static_shape", str(seqs.shape))
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        k = 0
        try:
            while True:
                s, n = sess.run([seqs, lengths])
                RESULT(f"p2_batch{k}", s)
                RESULT(f"p2_lengths{k}", n)
                k += 1
        except tf.errors.OutOfRangeError:
            RESULT("p2_batches", k)
        coord.request_stop()
        coord.join(threads)

# 3. shuffle_batch over range_input_producer: the order is random, the totals are not.
with tf.Graph().as_default():
    i = tf.train.range_input_producer(30, num_epochs=2, shuffle=False).dequeue()
    ib = tf.train.shuffle_batch([i, i * i], batch_size=7, capacity=16, min_after_dequeue=5, seed=3,
                                allow_smaller_final_batch=True)
    seen = []
    with tf.train.MonitoredSession() as sess:
        while not sess.should_stop():
            a, sq = sess.run(ib)
            seen.extend(a.tolist())
            RESULT(f"p3_squares_match_{len(seen)}", bool(np.all(sq == a * a)))
    RESULT("p3_count", len(seen))
    RESULT("p3_sorted", sorted(seen))

# 4. MonitoredTrainingSession with an endless input: StopAtStepHook ends it while runners block.
with tf.Graph().as_default():
    x, y = tf.train.slice_input_producer([X, Y], shuffle=True, seed=5)
    xb, yb = tf.train.batch([x, y], batch_size=10, capacity=12)
    w, b, loss, train, step = linear_model(xb, yb, 0.1)
    final = tf.train.FinalOpsHook(final_ops={"w": w, "b": b, "step": step})
    losses = []
    with tf.train.MonitoredTrainingSession(hooks=[tf.train.StopAtStepHook(last_step=25), final]) as sess:
        while not sess.should_stop():
            losses.append(sess.run([train, loss])[1])
    RESULT("p4_steps", len(losses))
    RESULT("p4_last_loss", losses[-1])
    RESULT("p4_w", final.final_ops_values["w"])
    RESULT("p4_b", final.final_ops_values["b"])
    RESULT("p4_global_step", final.final_ops_values["step"])
