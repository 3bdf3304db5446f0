"""The input pipeline: host input ops (``host_ops``), the step-time breakdown and its
bottleneck (``breakdown``) and tf.data iterators (``tf_data``, ``tf_data_forest``).
"""
