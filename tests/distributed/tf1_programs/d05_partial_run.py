"""Partial runs (Session.partial_run_setup / partial_run): one step fed and fetched in stages, each op
run once (a variable update, a dequeue), on a local session, on the worker's own server (variables on
the ps) and on a session whose master is the ps task (another process)."""
# TF_IMPORT
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
import argparse
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--ps_hosts")
ap.add_argument("--worker_hosts")
ap.add_argument("--job_name")
ap.add_argument("--task_index", type=int)
ap.add_argument("--work_dir")
FLAGS = ap.parse_args()
cluster = tf.train.ClusterSpec({"ps": FLAGS.ps_hosts.split(","), "worker": FLAGS.worker_hosts.split(",")})
server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
if FLAGS.job_name == "ps":
    server.join()
    sys.exit(0)


def first_line(e):
    return [l for l in str(e).splitlines() if l.strip() and "Graph execution error" not in l][0].strip()


def session_run(label, target, device):
    with tf.Graph().as_default(), tf.device(device):
        a = tf.placeholder(tf.float32, [], name="a")
        b = tf.placeholder(tf.float32, [], name="b")
        c = tf.placeholder(tf.float32, [], name="c")
        v = tf.Variable(1.0, name="v")
        r1 = tf.add(a, b, name="r1")
        inc = tf.assign_add(v, 1.0, name="inc")
        r2 = tf.multiply(r1 + inc, c, name="r2")
        q = tf.FIFOQueue(10, tf.float32, shapes=[], shared_name="q_" + label)
        enq = q.enqueue_many([[1.0, 2.0, 3.0]])
        d = q.dequeue()
        r3 = d * 10.0
        r4 = d + r2
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(enq)
            h = sess.partial_run_setup([r1, r2, r3, r4], [a, b, c])
            print("RESULT %s_r1 %s" % (label, sess.partial_run(h, r1, feed_dict={a: 1.0, b: 2.0})))
            print("RESULT %s_r3 %s" % (label, sess.partial_run(h, r3)))
            print("RESULT %s_r2_r4 %s" % (label, [float(x) for x in sess.partial_run(h, [r2, r4], feed_dict={c: 2.0})]))
            print("RESULT %s_v %s" % (label, sess.run(v)))
            h = sess.partial_run_setup([r1, r2], [a, b, c])
            print("RESULT %s_second_r1 %s" % (label, sess.partial_run(h, r1, feed_dict={a: 1.0, b: 2.0})))
            for name, call in [("refeed", lambda: sess.partial_run(h, r2, feed_dict={a: 1.0, c: 1.0})),
                               ("refetch", lambda: sess.partial_run(h, r1)),
                               ("unknown_fetch", lambda: sess.partial_run(h, r3)),
                               ("unknown_feed", lambda: sess.partial_run(h, r2, feed_dict={d: 1.0}))]:
                try:
                    call()
                    print("RESULT %s_%s no error" % (label, name))
                except tf.errors.InvalidArgumentError as e:
                    print("RESULT %s_%s %s" % (label, name, first_line(e)))
            print("RESULT %s_second_r2 %s" % (label, sess.partial_run(h, r2, feed_dict={c: 3.0})))
            try:
                sess.partial_run(h, r1)
            except tf.errors.InvalidArgumentError as e:
                print("RESULT %s_finished %s" % (label, first_line(e)))
            h = sess.partial_run_setup([r1, r2], [a, b, c])
            try:
                sess.partial_run(h, r2, feed_dict={a: 1.0, b: 2.0})
            except tf.errors.InvalidArgumentError as e:
                print("RESULT %s_missing_feed %s" % (label, first_line(e)))
            print("RESULT %s_v_end %s %d" % (label, sess.run(v), sess.run(q.size())))


worker = "/job:worker/task:%d" % FLAGS.task_index
session_run("local", "", None)
session_run("own_server", server.target, tf.train.replica_device_setter(worker_device=worker, cluster=cluster))
session_run("ps_master", "grpc://" + FLAGS.ps_hosts.split(",")[0], "/job:ps/task:0")
