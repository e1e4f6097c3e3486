"""Program plumbing of the TF1 API: ``tf.app`` / ``tf.flags`` (on absl) and ``tf.test``."""
