"""Summary files for TensorBoard: the events-file writer, FileWriter and summary_iterator."""
