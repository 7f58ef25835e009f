"""The ``openstack elastman ...`` plugin of python-openstackclient."""
