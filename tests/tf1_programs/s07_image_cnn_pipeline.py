"""An image input pipeline and a small CNN in a TF1 program: images encoded to PNG and JPEG and decoded
again, cropped, resized, flipped and distorted at random (seeded), standardized, then a convolutional
network with a bilinear upsampling, space_to_depth and patch extraction trained for a few steps."""
# ruff: noqa: I001 - the marked TF import and disable_v2_behavior() stay together for the runner
import numpy as np

# TF_IMPORT
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()


def RESULT(name, value):  # noqa: N802 - the corpus's helper
    a = np.asarray(value)
    if a.size > 32:
        print("RESULT %s.shape %s" % (name, " ".join(str(d) for d in a.shape)))
        print("RESULT %s.sum %.6g" % (name, a.sum(dtype=np.float64)))
        print("RESULT %s.abssum %.6g" % (name, np.abs(a).sum(dtype=np.float64)))
        return
    words = []
    for e in a.ravel().tolist():
        if isinstance(e, bool):
            words.append(str(e))
        elif isinstance(e, int):
            words.append("%d" % e)
        elif isinstance(e, float):
            words.append("%.6g" % e)
        elif isinstance(e, bytes):
            words.append(e.decode())
        else:
            words.append(str(e))
    print("RESULT %s %s" % (name, " ".join(words)))


rs = np.random.RandomState(7)
raw_images = [rs.randint(0, 256, size=(14, 12, 3)).astype(np.uint8) for _ in range(4)]
labels_np = np.array([0, 1, 2, 1], np.int32)

with tf.Graph().as_default():
    tf.set_random_seed(1)
    # ---- encode (PNG for two images, JPEG for two) and decode again, as files read from disk would be
    encoded = [tf.image.encode_png(tf.constant(im)) if i % 2 == 0 else tf.image.encode_jpeg(tf.constant(im), quality=90)
               for i, im in enumerate(raw_images)]
    contents = tf.placeholder(tf.string, [], name="contents")
    decoded = tf.image.decode_image(contents, channels=3)
    is_jpeg = tf.image.is_jpeg(contents)

    def preprocess(image_bytes, index):
        image = tf.image.decode_png(image_bytes, channels=3) if index % 2 == 0 else \
            tf.image.decode_jpeg(image_bytes, channels=3)
        image = tf.image.convert_image_dtype(image, tf.float32)
        image = tf.image.resize_image_with_crop_or_pad(image, 12, 12)
        image = tf.random_crop(image, [10, 10, 3], seed=index + 1)
        image = tf.image.resize_images(image, [8, 8])
        image = tf.image.random_flip_left_right(image, seed=2)
        image = tf.image.random_brightness(image, 0.2, seed=3)
        image = tf.image.random_contrast(image, 0.7, 1.3, seed=4)
        image = tf.image.random_saturation(image, 0.8, 1.2, seed=5)
        image = tf.image.random_hue(image, 0.05, seed=6)
        image = tf.image.rot90(image, k=index)
        return tf.image.per_image_standardization(image)

    batch = tf.stack([preprocess(e, i) for i, e in enumerate(encoded)])
    gray = tf.image.rgb_to_grayscale(tf.image.convert_image_dtype(tf.image.decode_png(contents, channels=3),
                                                                  tf.float32))
    hsv = tf.image.rgb_to_hsv(tf.image.central_crop(batch[:, :, :, :] * 0.1 + 0.5, 0.5))
    labels = tf.constant(labels_np)

    # ---- a small CNN
    init = tf.glorot_uniform_initializer(seed=11)
    w1 = tf.get_variable("w1", [3, 3, 3, 8], initializer=init)
    w2 = tf.get_variable("w2", [3, 3, 8, 4], initializer=init)
    w3 = tf.get_variable("w3", [4 * 4 * 16 + 4 * 4 * 36, 3], initializer=init)
    h = tf.nn.relu(tf.nn.conv2d(batch, w1, strides=[1, 2, 2, 1], padding="SAME"))  # [4, 4, 4, 8]
    up = tf.image.resize_bilinear(h, [8, 8], align_corners=True)  # [4, 8, 8, 8]
    h2 = tf.nn.relu(tf.nn.conv2d(up, w2, strides=[1, 1, 1, 1], padding="SAME"))  # [4, 8, 8, 4]
    folded = tf.space_to_depth(h2, 2)  # [4, 4, 4, 16]
    patches = tf.extract_image_patches(h2, ksizes=[1, 3, 3, 1], strides=[1, 2, 2, 1], rates=[1, 1, 1, 1],
                                       padding="SAME")  # [4, 4, 4, 36]
    features = tf.concat([tf.reshape(folded, [4, -1]), tf.reshape(patches, [4, -1])], axis=1)
    logits = tf.matmul(features, w3)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    grads = tf.gradients(loss, [w1, w2, w3])
    train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)

    RESULT("shapes", [str(t.shape) for t in (decoded, batch, gray, hsv, h, up, folded, patches, logits)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        encoded_v = sess.run(encoded)
        for i, e in enumerate(encoded_v):
            image, jpeg = sess.run([decoded, is_jpeg], {contents: e})
            RESULT("decoded_%d" % i, [image.shape[0], image.shape[1], int(image.sum()), bool(jpeg)])
        RESULT("png_roundtrip_exact", bool((sess.run(decoded, {contents: encoded_v[0]}) == raw_images[0]).all()))
        batch_v, gray_v, hsv_v = sess.run([batch, gray, hsv], {contents: encoded_v[2]})
        RESULT("batch_corner", batch_v[:, 0, :4, 0])
        RESULT("batch_abssum", float(np.abs(batch_v).sum(dtype=np.float64)))
        RESULT("batch_mean_std", [float(batch_v[i].mean()) for i in range(4)] + [float(batch_v[i].std())
                                                                              for i in range(4)])
        RESULT("gray", gray_v)
        RESULT("hsv", hsv_v)
        RESULT("grad_norms", [float(np.sqrt((g ** 2).sum())) for g in sess.run(grads)])
        for step in range(5):
            loss_v, _ = sess.run([loss, train])
            RESULT("loss_%d" % step, loss_v)
        RESULT("logits", sess.run(logits))
