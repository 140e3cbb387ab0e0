"""Packaging for rag_lib: metadata and requirements come from nbdev's settings.ini."""
from configparser import ConfigParser
import setuptools

cfg = ConfigParser(delimiters=['='])
cfg.read('settings.ini', encoding='utf-8')
cfg = cfg['DEFAULT']
reqs = lambda key: cfg.get(key, '').split()

setuptools.setup(
    name=cfg['lib_name'],
    version=cfg['version'],
    description=cfg['description'],
    author=cfg['author'],
    author_email=cfg['author_email'],
    license='Apache-2.0',
    url=cfg['git_url'],
    project_urls={'Source': cfg['git_url']},
    keywords=cfg['keywords'].split(),
    long_description=open('README.md', encoding='utf-8').read(),
    long_description_content_type='text/markdown',
    classifiers=['Programming Language :: Python :: 3', 'Topic :: Scientific/Engineering :: Artificial Intelligence'],
    python_requires='>=' + cfg['min_python'],
    packages=setuptools.find_packages(include=['rag_lib', 'rag_lib.*']),
    install_requires=reqs('requirements'),
    extras_require={'dev': reqs('dev_requirements'), 'train': reqs('train_requirements'),
                    'gpu': reqs('gpu_requirements'), 'hub': reqs('hub_requirements')},
    entry_points={'console_scripts': ['rag-lib=rag_lib.pipeline:main'],
                  'nbdev': [f"{cfg['lib_path']}={cfg['lib_path']}._modidx:d"]},
    include_package_data=True,
    zip_safe=False,
)
