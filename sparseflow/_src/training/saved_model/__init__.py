"""SavedModel in TensorFlow's TF1 layout: ``saved_model.pb`` (a SavedModel proto of tagged
MetaGraphDefs with signatures) beside ``variables/variables.{index,data-00000-of-00001}`` (a
checkpoint bundle) and ``assets/``; written by ``SavedModelBuilder`` / ``simple_save``, read by
``loader.load``. Models written here load in TensorFlow's ``tf.compat.v1.saved_model.loader``,
and TensorFlow's TF1 SavedModels of implemented ops load here.
"""
