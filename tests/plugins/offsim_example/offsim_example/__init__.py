"""An example offsim extension: the ``filter`` accelerator kind and the ``filter_stream`` generator."""
