from configparser import ConfigParser
import setuptools, shlex

# note: all settings are in settings.ini; edit there, not here
config = ConfigParser(delimiters=['='])
config.read('settings.ini', encoding='utf-8')
cfg = config['DEFAULT']

cfg_keys = 'version description keywords author author_email'.split()
expected = cfg_keys + "lib_name user branch license status min_python audience language".split()
for o in expected: assert o in cfg, "missing expected setting: {}".format(o)
setup_cfg = {o:cfg[o] for o in cfg_keys}

requirements = shlex.split(cfg.get('requirements', ''))
dev_requirements = shlex.split(cfg.get('dev_requirements', ''))
train_requirements = shlex.split(cfg.get('train_requirements', 'torch>=2.4 safetensors'))
lab_requirements = shlex.split(cfg.get('lab_requirements', ''))

setuptools.setup(
    name = cfg['lib_name'],
    license = 'Apache Software License 2.0',
    classifiers = ['Programming Language :: Python :: 3.11'],
    url = cfg['git_url'],
    # namespace discovery: dflash_nb/templates (the chat template, a data folder without __init__.py) is a package too,
    # so setuptools ships it without its 40-line "absent from the `packages` configuration" warning
    packages = setuptools.find_namespace_packages(include=['dflash_nb', 'dflash_nb.*']),
    # a flat layout: `pip install -e` adds the repo to sys.path (a .pth file), no finder and no warning block
    package_dir = {'': '.'},
    include_package_data = True,
    package_data = {'dflash_nb.templates': ['*.jinja']},  # data files the package reads (the chat template)
    install_requires = requirements,
    extras_require = {'dev': dev_requirements, 'train': train_requirements, 'lab': lab_requirements},
    python_requires  = '>=' + cfg['min_python'],
    long_description = open('README.md', encoding='utf-8').read(),
    long_description_content_type = 'text/markdown',
    zip_safe = False,
    entry_points = {
        'console_scripts': cfg.get('console_scripts','').split(),
        'nbdev': [f'{cfg.get("lib_path")}={cfg.get("lib_path")}._modidx:d']
    },
    **setup_cfg)
